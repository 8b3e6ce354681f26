/**
 * The issuing benchmark: how much the number series and the write-once store cost on top of rendering.
 *
 * In one run and one process: (R) the Chromium renderer alone, rendering a 3-line invoice as fast as `concurrency`
 * callers can, and (ISSUE) `POST /v1/invoices?issue=true` with the same 3 lines for one organisation through the real
 * app, same renderer settings, same concurrency. Target: ISSUE ≥ 0.8 × R, i.e. numbering and storage add ≤ 25 %.
 * Rendering dominates and runs in Chromium's own processes, so the requests go through `app.inject` in this process.
 */
import { performance } from 'node:perf_hooks';
import { buildApp } from '../../services/api/app.ts';
import { createChromiumRenderer } from '../../activities/pdf/chromium-renderer.ts';
import { createPostgresDocumentStore } from '../../services/documents/postgres-document-store.ts';
import { realClock } from '../../services/shared/clock.ts';
import type { Keyring } from '../../services/shared/crypto.ts';
import { createSql, Db } from '../../services/shared/db.ts';
import { createOrganization } from '../../services/organizations/create-organization.ts';
import { percentile } from './percentile.ts';
import type { DocumentViews } from '../../services/documents/pdf-renderer.ts';

export interface IssuingFigures {
  concurrency: number;
  durationSec: number;
  poolSize: number;
  renderer: { perSec: number; p50Ms: number; p99Ms: number; count: number };
  issuing: { perSec: number; p50Ms: number; p99Ms: number; count: number };
  ratio: number;
  target: number;
  pass: boolean;
}

export const LINES = [
  { description: 'Rugbrød, groft', quantity: 12, unitPriceOere: 4500, vatRateBps: 2500 },
  { description: 'Levering', quantity: 1, unitPriceOere: 15000, vatRateBps: 2500, discount: { type: 'percent', value: 10 } },
  { description: 'Kursus i bagning', quantity: 1.5, unitPriceOere: 100000, vatRateBps: 0, vatExemptionReason: 'ML13' },
];


/** Runs `once` from `concurrency` loops for `durationSec` seconds; returns completions per second and latencies. */
export async function closedLoop(concurrency: number, durationSec: number, once: () => Promise<void>) {
  const times: number[] = [];
  const end = performance.now() + durationSec * 1000;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        await once();
        times.push(performance.now() - t0);
      }
    }),
  );
  const elapsed = (performance.now() - start) / 1000;
  times.sort((a, b) => a - b);
  return { perSec: times.length / elapsed, p50Ms: percentile(times, 50), p99Ms: percentile(times, 99), count: times.length };
}

export async function benchIssuing(
  url: string,
  keyring: Keyring,
  opts: { concurrency: number; durationSec: number; warmupSec: number; poolSize: number; poolMax: number },
): Promise<IssuingFigures> {
  const pdf = createChromiumRenderer({ poolSize: opts.poolSize });
  const db = new Db(createSql(url, { max: opts.poolMax }), opts.poolMax);
  const app = await buildApp({
    db,
    keyring,
    pdf,
    documents: createPostgresDocumentStore(),
    clock: realClock,
    mailDispatch: { dispatch: () => Promise.reject(new Error('the issuing bench does not send')) },
    mailDomain: 'faktura.invalid',
    config: { rateLimitDefault: 0, rateLimitDocument: 0, authCacheTtlMs: 60_000, logLevel: 'warn' },
  });
  try {
    const org = await db.tx((tx) =>
      createOrganization(tx, { name: 'Bench Bageri ApS', cvr: '12345678', sandbox: true, street: 'Nørregade 1', postalCode: '8000', city: 'Aarhus C', bankReg: '1234', bankAccount: '0001234567' }),
    );
    const auth = { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/json' };
    const customer = await app.inject({
      method: 'POST', url: '/v1/customers', headers: { ...auth, 'idempotency-key': 'bench-issuing-customer' },
      payload: { type: 'company', name: 'Kunde A/S', cvr: '87654321', address: { street: 'Vestergade 2', postalCode: '5000', city: 'Odense C' } },
    });
    const customerId = (JSON.parse(customer.body) as { data: { id: string } }).data.id;
    let n = 0;
    const issueOnce = async () => {
      const res = await app.inject({
        method: 'POST', url: '/v1/invoices?issue=true', headers: { ...auth, 'idempotency-key': `bench-issue-${process.pid}-${++n}` },
        payload: { customerId, lines: LINES },
      });
      if (res.statusCode !== 201) throw new Error(`issue answered ${res.statusCode}: ${res.body}`);
    };
    // The same document the route renders, taken from a first issued invoice, so both runs render the same thing.
    await issueOnce();
    const view: DocumentViews['invoice'] = {
      language: 'da', kind: 'invoice', number: 1, issueDate: '2026-11-21', dueDate: '2026-12-05',
      seller: { name: 'Bench Bageri ApS', cvr: '12345678', street: 'Nørregade 1', postalCode: '8000', city: 'Aarhus C', country: null, email: null, bankReg: '1234', bankAccount: '0001234567' },
      buyer: { name: 'Kunde A/S', cvr: '87654321', street: 'Vestergade 2', postalCode: '5000', city: 'Odense C', country: null, contactPerson: null },
      heading: null, message: null, customerReference: null, senderReference: null, buyerReference: null, orderReference: null,
      lines: [
        { description: LINES[0]!.description, quantity: '12', unit: null, unitPriceOere: 4500, discount: null, discountOere: 0, netOere: 54000, vatRateBps: 2500, vatExemptionReason: null },
        { description: LINES[1]!.description, quantity: '1', unit: null, unitPriceOere: 15000, discount: { type: 'percent', value: 10 }, discountOere: 1500, netOere: 13500, vatRateBps: 2500, vatExemptionReason: null },
        { description: LINES[2]!.description, quantity: '1.5', unit: null, unitPriceOere: 100000, discount: null, discountOere: 0, netOere: 150000, vatRateBps: 0, vatExemptionReason: 'ML13' },
      ],
      vatSummary: [{ vatRateBps: 2500, netOere: 67500, vatOere: 16875 }],
      exemptSummary: [{ reason: 'ML13', netOere: 150000 }],
      netOere: 217500, vatOere: 16875, grossOere: 234375, credits: null,
    };
    const renderOnce = async () => void (await pdf.render('invoice', view));
    await closedLoop(opts.concurrency, opts.warmupSec, renderOnce);
    const renderer = await closedLoop(opts.concurrency, opts.durationSec, renderOnce);
    await closedLoop(opts.concurrency, opts.warmupSec, issueOnce);
    const issuing = await closedLoop(opts.concurrency, opts.durationSec, issueOnce);
    const ratio = issuing.perSec / renderer.perSec;
    return { concurrency: opts.concurrency, durationSec: opts.durationSec, poolSize: opts.poolSize, renderer, issuing, ratio, target: 0.8, pass: ratio >= 0.8 };
  } finally {
    await app.close();
    await pdf.close();
    await db.close();
  }
}

export function formatIssuing(f: IssuingFigures): string {
  const row = (name: string, r: { perSec: number; p50Ms: number; p99Ms: number }) =>
    `  ${name.padEnd(34)} ${r.perSec.toFixed(1).padStart(7)}/s   p50 ${r.p50Ms.toFixed(0).padStart(4)} ms   p99 ${r.p99Ms.toFixed(0).padStart(4)} ms`;
  return [
    `Issuing (one organisation, 3 lines, ${f.concurrency} concurrent callers, renderer pool ${f.poolSize}, ${f.durationSec} s each)`,
    row('R: renderer alone (PDFs)', f.renderer),
    row('POST /v1/invoices?issue=true', f.issuing),
    `  ratio ${f.ratio.toFixed(2)} × R   target ≥ ${f.target} × R   ${f.pass ? 'PASS' : 'FAIL'}`,
  ].join('\n');
}
