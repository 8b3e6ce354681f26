import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { createHttpLetterService, type LetterRequestBody } from '../../activities/letters/http-letters.ts';
import { createLetterService } from '../../activities/letters/create-letter-service.ts';
import { createLocalLetterService } from '../../activities/letters/local-letters.ts';
import type { Letter } from '../../services/letters/letter-port.ts';
import { readConfig } from '../../services/shared/config.ts';
import { sha256 } from '../../services/shared/crypto.ts';
import { DomainError } from '../../services/shared/errors.ts';

/** The letter port's two adapters: PDF and sidecar files on disk, and a print-and-post provider's HTTP API on loopback. */

const pdf = Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(2048), Buffer.from('\n%%EOF\n')]);
const letter = (over: Partial<Letter> = {}): Letter => ({
  id: '0192f1c2-7d3e-7a00-8000-000000000042',
  organizationId: '0192f1c2-7d3e-7a00-8000-0000000000aa',
  documentSha256: sha256(pdf).toString('hex'),
  pdf,
  recipient: { name: 'Ida Jensen', street: 'Vestergade 2', postalCode: '5000', city: 'Odense C', country: 'DK' },
  sender: { name: 'Bager Hansen ApS', street: 'Bagergade 12', postalCode: '8000', city: 'Aarhus C' },
  ...over,
});

function collectLog(): { log: (level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void; lines: string[] } {
  const lines: string[] = [];
  return { lines, log: (level, msg, fields) => lines.push(JSON.stringify({ level, msg, ...fields })) };
}

describe('local letters', () => {
  it('writes the PDF byte for byte and the exact sidecar; a second send of the same letter writes nothing new', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'faktura-test-letters-'));
    const { log, lines } = collectLog();
    const service = createLocalLetterService(dir, log, { now: () => new Date('2026-01-07T09:30:00.000Z') });
    const l = letter();
    assert.deepEqual(await service.send(l), { reference: l.id });
    assert.deepEqual(readdirSync(dir).sort(), [`${l.id}.json`, `${l.id}.pdf`]);
    assert.ok(readFileSync(join(dir, `${l.id}.pdf`)).equals(pdf));
    assert.deepEqual(JSON.parse(readFileSync(join(dir, `${l.id}.json`), 'utf8')), {
      id: l.id,
      organizationId: l.organizationId,
      documentSha256: l.documentSha256,
      recipient: { name: 'Ida Jensen', street: 'Vestergade 2', postalCode: '5000', city: 'Odense C', country: 'DK' },
      createdAt: '2026-01-07T09:30:00.000Z',
    });
    const sidecar = readFileSync(join(dir, `${l.id}.json`));

    // Again, also from another process's adapter: the same letter, not a second one.
    const again = createLocalLetterService(dir, log, { now: () => new Date('2026-01-08T00:00:00.000Z') });
    assert.deepEqual(await again.send(l), { reference: l.id });
    assert.deepEqual(await Promise.all([service.send(l), service.send(l)]), [{ reference: l.id }, { reference: l.id }]);
    assert.deepEqual(readdirSync(dir).sort(), [`${l.id}.json`, `${l.id}.pdf`]);
    assert.ok(readFileSync(join(dir, `${l.id}.json`)).equals(sidecar), 'the sidecar was rewritten');
    assert.ok(!lines.join('\n').includes('Vestergade'), 'the address reached the log');
  });

  it('refuses another document under an id already posted, and a PDF that does not match its hash', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'faktura-test-letters-'));
    const service = createLocalLetterService(dir, () => {});
    await service.send(letter());
    const other = Buffer.from('%PDF-1.7\nanother\n%%EOF\n');
    await assert.rejects(service.send(letter({ pdf: other, documentSha256: sha256(other).toString('hex') })), (err) => err instanceof DomainError && err.code === 'letter_rejected');
    await assert.rejects(service.send(letter({ id: '0192f1c2-7d3e-7a00-8000-000000000043', pdf: other })), /does not match/);
    await assert.rejects(service.send(letter({ id: '../escape' })), /cannot name a file/);
  });
});

interface Received {
  method: string | undefined;
  url: string | undefined;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A provider on 127.0.0.1 answering each request with the next handler's reply (the last one repeats). */
async function startProvider(...replies: ((req: IncomingMessage, res: ServerResponse) => void)[]): Promise<{ url: string; received: Received[]; close(): Promise<void> }> {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      received.push({ method: req.method, url: req.url, headers: req.headers, body });
      const reply = replies[Math.min(received.length - 1, replies.length - 1)]!;
      reply(req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1/letters`,
    received,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

const json = (status: number, body: unknown) => (_req: IncomingMessage, res: ServerResponse) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

describe('HTTP letters', () => {
  const KEY = 'letter-secret-key-123';

  it('POSTs the letter with the bearer key and its id as Idempotency-Key; a 2xx gives the provider reference', async () => {
    const provider = await startProvider(json(201, { reference: 'PP-778899', status: 'queued' }));
    try {
      const { log, lines } = collectLog();
      const service = createHttpLetterService({ url: provider.url, apiKey: KEY, log });
      const l = letter();
      assert.deepEqual(await service.send(l), { reference: 'PP-778899' });
      assert.equal(provider.received.length, 1);
      const req = provider.received[0]!;
      assert.equal(req.method, 'POST');
      assert.equal(req.url, '/v1/letters');
      assert.equal(req.headers.authorization, `Bearer ${KEY}`);
      assert.equal(req.headers['idempotency-key'], l.id);
      assert.match(req.headers['content-type'] ?? '', /^application\/json/);
      const body = JSON.parse(req.body) as LetterRequestBody;
      assert.deepEqual(Object.keys(body).sort(), ['documentSha256', 'id', 'organizationId', 'pdf', 'recipient', 'sender']);
      assert.ok(Buffer.from(body.pdf, 'base64').equals(pdf), 'the base64 PDF does not decode to the bytes');
      assert.equal(body.id, l.id);
      assert.equal(body.organizationId, l.organizationId);
      assert.equal(body.documentSha256, l.documentSha256);
      assert.deepEqual(body.recipient, l.recipient);
      assert.deepEqual(body.sender, l.sender);
      // The key and the address never reach the log.
      const logged = lines.join('\n');
      assert.ok(!logged.includes(KEY) && !logged.includes('Vestergade'), logged);
    } finally {
      await provider.close();
    }
  });

  it('a 2xx without a reference answers with the letter id', async () => {
    const provider = await startProvider((_req, res) => res.writeHead(202).end());
    try {
      assert.deepEqual(await createHttpLetterService({ url: provider.url, apiKey: KEY, log: () => {} }).send(letter()), { reference: letter().id });
    } finally {
      await provider.close();
    }
  });

  it('a 4xx is a permanent refusal (DomainError letter_rejected, with the provider reason); 429 is not', async () => {
    const provider = await startProvider(json(422, { error: { message: 'postal code 5000 does not match city' } }), json(429, { message: 'slow down' }));
    try {
      const service = createHttpLetterService({ url: provider.url, apiKey: KEY, log: () => {} });
      const refused = await service.send(letter()).then(() => assert.fail('sent'), (err: unknown) => err);
      assert.ok(refused instanceof DomainError, String(refused));
      assert.equal(refused.code, 'letter_rejected');
      assert.match(refused.message, /422 postal code 5000 does not match city/);
      const later = await service.send(letter()).then(() => assert.fail('sent'), (err: unknown) => err);
      assert.ok(later instanceof Error && !(later instanceof DomainError), String(later));
      assert.match(later.message, /429/);
    } finally {
      await provider.close();
    }
  });

  it('a 5xx and an unreachable provider are retryable errors', async () => {
    const provider = await startProvider((_req, res) => res.writeHead(503).end('maintenance'));
    try {
      const err = await createHttpLetterService({ url: provider.url, apiKey: KEY, log: () => {} }).send(letter()).then(() => assert.fail('sent'), (e: unknown) => e);
      assert.ok(err instanceof Error && !(err instanceof DomainError), String(err));
      assert.match(err.message, /503 maintenance/);
    } finally {
      await provider.close();
    }
    const closed = await createHttpLetterService({ url: provider.url, apiKey: KEY, log: () => {} }).send(letter()).then(() => assert.fail('sent'), (e: unknown) => e);
    assert.ok(closed instanceof Error && !(closed instanceof DomainError), String(closed));
    assert.match(closed.message, /the letter service at http:\/\/127\.0\.0\.1:\d+\/v1\/letters failed/);
    assert.ok(!closed.message.includes(KEY));
  });

  it('a provider that does not answer within the timeout is a retryable error', async () => {
    const provider = await startProvider(() => {
      // never answers
    });
    try {
      const started = Date.now();
      const err = await createHttpLetterService({ url: provider.url, apiKey: KEY, log: () => {}, timeoutMs: 300 }).send(letter()).then(() => assert.fail('sent'), (e: unknown) => e);
      assert.ok(err instanceof Error && !(err instanceof DomainError), String(err));
      assert.match(err.message, /no answer within 300 ms/);
      assert.ok(Date.now() - started < 5000);
    } finally {
      await provider.close();
    }
  });

  it('createLetterService picks the HTTP adapter with LETTER_API_URL, else files under DATA_DIR/letters', async () => {
    const provider = await startProvider(json(200, { id: 'ref-1' }));
    try {
      const { log, lines } = collectLog();
      const http = createLetterService({ letterApiUrl: provider.url, letterApiKey: KEY, dataDir: '/nonexistent' }, log);
      assert.deepEqual(await http.send(letter()), { reference: 'ref-1' });
      assert.ok(!lines.join('\n').includes(KEY));
    } finally {
      await provider.close();
    }
    const dataDir = mkdtempSync(join(tmpdir(), 'faktura-test-data-'));
    const local = createLetterService({ letterApiUrl: undefined, letterApiKey: undefined, dataDir }, () => {});
    await local.send(letter());
    assert.deepEqual(readdirSync(join(dataDir, 'letters')).sort(), [`${letter().id}.json`, `${letter().id}.pdf`]);
    assert.throws(() => createLetterService({ letterApiUrl: provider.url, letterApiKey: undefined, dataDir }, () => {}), /LETTER_API_KEY/);
  });

  it('reads LETTER_API_URL and LETTER_API_KEY from the environment; a URL without its key stops the start', () => {
    assert.deepEqual(
      (({ letterApiUrl, letterApiKey }) => ({ letterApiUrl, letterApiKey }))(readConfig({ LETTER_API_URL: 'https://print.example.dk/v1/letters/', LETTER_API_KEY: KEY })),
      { letterApiUrl: 'https://print.example.dk/v1/letters', letterApiKey: KEY },
    );
    assert.deepEqual((({ letterApiUrl, letterApiKey }) => ({ letterApiUrl, letterApiKey }))(readConfig({})), { letterApiUrl: undefined, letterApiKey: undefined });
    assert.throws(() => readConfig({ LETTER_API_URL: 'https://print.example.dk/v1/letters' }), (err: Error) => /LETTER_API_KEY/.test(err.message));
    assert.throws(() => readConfig({ LETTER_API_URL: 'ftp://print.example.dk', LETTER_API_KEY: KEY }), (err: Error) => /LETTER_API_URL/.test(err.message) && !err.message.includes(KEY));
  });
});
