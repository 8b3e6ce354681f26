import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from '../helpers/scripts.ts';

const run = promisify(execFile);
const CLIENT = join(ROOT, 'clients/typescript');
const BIN = join(ROOT, 'node_modules/.bin');
// The project's Node 22 and its tsc first, as npm scripts have them.
const ENV = { ...process.env, PATH: `${BIN}:${process.env.PATH ?? '/usr/bin:/bin'}` };

/**
 * The typed client as an integrator gets it: `npm pack` in clients/typescript (its prepack script compiles
 * JavaScript and declarations with tsc), the tarball installed into a scratch project, and a consumer file
 * type-checked and run there. The scratch project takes openapi-fetch from this repository's node_modules by
 * file: links, so the install needs no registry (`--offline`).
 */
describe('the typed client as an installable package (npm pack, then a scratch project)', function () {
  this.timeout(180_000);

  let dir: string;
  let scratch: string;
  let tarball: string;
  let packed: string[];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'faktura-client-pack-'));
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', dir], { cwd: CLIENT, env: ENV });
    // With --json, stdout is the JSON alone (npm writes the scripts' banners to stderr).
    const [result] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
    tarball = join(dir, result!.filename);
    packed = result!.files.map((f) => f.path).sort();

    scratch = join(dir, 'scratch');
    const shared = realpathSync(join(ROOT, 'node_modules'));
    mkdirSync(scratch);
    writeFileSync(
      join(scratch, 'package.json'),
      JSON.stringify({
        name: 'client-package-consumer',
        private: true,
        type: 'module',
        dependencies: {
          'faktura-api-client': `file:${tarball}`,
          'openapi-fetch': `file:${join(shared, 'openapi-fetch')}`,
          'openapi-typescript-helpers': `file:${join(shared, 'openapi-typescript-helpers')}`,
        },
      }),
    );
    await run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: scratch, env: ENV });
  });

  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    // postpack removes the build output; this covers a pack that stopped half-way.
    rmSync(join(CLIENT, 'dist'), { recursive: true, force: true });
  });

  it('packs compiled JavaScript with its declarations and the OpenAPI document, no TypeScript sources', () => {
    assert.deepEqual(packed, [
      'README.md',
      'dist/index.d.ts',
      'dist/index.js',
      'dist/schema.d.ts',
      'dist/schema.js',
      'openapi.json',
      'package.json',
    ]);
  });

  it('type-checks a consumer with tsc, and refuses a wrong body and a wrong type', async () => {
    // The package README's example as an integrator copies it, and two mistakes the compiler must catch (tsc fails on
    // an expect-error directive with no error under it, so each marked line below must be an error).
    const example = /```ts\n([\s\S]*?)```/.exec(readFileSync(join(CLIENT, 'README.md'), 'utf8'))?.[1];
    assert.ok(example?.includes("from 'faktura-api-client'"), 'clients/typescript/README.md has a ts example importing the package');
    writeFileSync(
      join(scratch, 'consumer.ts'),
      `${example}
export async function wrongDiscount(customerId: string): Promise<void> {
  await api.POST('/v1/invoices', {
    params: { header: { 'idempotency-key': 'invoice-order-1002' } },
    // @ts-expect-error a discount is {type, value}, not a bare percentage
    body: { customerId, lines: [{ description: 'Rugbrød', quantity: 40, unitPriceOere: 3500, discount: 10 }] },
  });
}

// @ts-expect-error amounts are integer øre, a number
export const wrongAmount: Schemas['Invoice']['grossOere'] = '2700.00';
`,
    );
    writeFileSync(
      join(scratch, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          lib: ['ES2022', 'DOM'],
          types: [],
          strict: true,
          noEmit: true,
        },
        files: ['consumer.ts'],
      }),
    );
    const tsc = await run(join(BIN, 'tsc'), ['-p', 'tsconfig.json'], { cwd: scratch, env: ENV }).catch(
      (err: { stdout: string }) => assert.fail(`tsc refused the consumer:\n${err.stdout}`),
    );
    assert.equal(tsc.stdout, '');
  });

  it('runs as plain JavaScript: the client sends the key as a bearer token and reads the envelope', async () => {
    const seen: IncomingHttpHeaders[] = [];
    const server: Server = createServer((req, res) => {
      seen.push(req.headers);
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ data: { name: 'Faktura API', version: 'v1' }, meta: {} }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      writeFileSync(
        join(scratch, 'run.mjs'),
        `import { createFakturaClient } from 'faktura-api-client';
const api = createFakturaClient({ baseUrl: process.argv[2], apiKey: 'sk_test_example' });
const { data, response } = await api.GET('/v1');
process.stdout.write(JSON.stringify({ status: response.status, data }));
`,
      );
      const { stdout } = await run(join(BIN, 'node'), ['run.mjs', baseUrl], { cwd: scratch, env: ENV });
      assert.deepEqual(JSON.parse(stdout), { status: 200, data: { data: { name: 'Faktura API', version: 'v1' }, meta: {} } });
      assert.equal(seen.length, 1);
      assert.equal(seen[0]!.authorization, 'Bearer sk_test_example');
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
