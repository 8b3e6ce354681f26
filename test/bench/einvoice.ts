/**
 * The e-invoice benchmark: what an e-invoice costs against the PDF it embeds.
 *
 * In one run and one process, on the same issued invoices: (R) the Chromium renderer alone rendering their PDF views,
 * and per profile (E) `buildEInvoice` from their issued sources, each from `concurrency` callers in a closed loop.
 * Target: E ≥ 1 × R per profile, i.e. an e-invoice costs no more than its PDF. The route,
 * `GET /v1/invoices/{id}/einvoice?profile=…`, is measured too through `app.inject`: after its first request per profile
 * it answers the stored bytes, so it measures the write-once read path (a diagnostic, no target).
 */
import { buildApp } from '../../services/api/app.ts';
import { createChromiumRenderer } from '../../activities/pdf/chromium-renderer.ts';
import { createPostgresDocumentStore } from '../../services/documents/postgres-document-store.ts';
import { realClock } from '../../services/shared/clock.ts';
import type { Keyring } from '../../services/shared/crypto.ts';
import { createSql, Db } from '../../services/shared/db.ts';
import { createOrganization } from '../../services/organizations/create-organization.ts';
import { gs1CheckDigit } from '../../services/customers/einvoice-address.ts';
import { buildEInvoice, type EInvoiceSource } from '../../services/einvoices/build-ubl.ts';
import { loadEInvoiceSource } from '../../services/einvoices/einvoice-view.ts';
import { issuedRow } from '../../services/einvoices/get-einvoice.ts';
import { EINVOICE_PROFILES, type EInvoiceProfile } from '../../services/einvoices/ubl-mappings.ts';
import { frozenDocumentView } from '../../services/invoices/load-document-view.ts';
import type { InvoiceDocumentView } from '../../services/invoices/invoice-document.ts';
import { closedLoop, LINES } from './issuing.ts';

type Loop = Awaited<ReturnType<typeof closedLoop>>;

export interface EInvoiceProfileFigures {
  profile: EInvoiceProfile;
  /** E: `buildEInvoice` alone, from the sources loaded once per invoice. */
  build: Loop;
  /** The route, answering the stored document (write-once read path); diagnostic. */
  route: Loop;
  /** Mean size of one e-invoice (the embedded PDF in base64 most of it). */
  meanBytes: number;
  /** E / R. */
  ratio: number;
  pass: boolean;
}

export interface EInvoiceFigures {
  concurrency: number;
  durationSec: number;
  poolSize: number;
  invoices: number;
  /** Mean size of the invoices' stored PDFs. */
  meanPdfBytes: number;
  renderer: Loop;
  profiles: EInvoiceProfileFigures[];
  target: number;
}

/** Issued invoices per customer: one customer addressed by GLN, one by Peppol id. */
const INVOICES_PER_CUSTOMER = 3;
/** A GLN with a valid GS1 check digit (5798… is the Danish GS1 prefix range public buyers' GLNs come from). */
const GLN = `579800000001${gs1CheckDigit('579800000001')}`;

export async function benchEInvoice(
  url: string,
  keyring: Keyring,
  opts: { concurrency: number; durationSec: number; warmupSec: number; poolSize: number; poolMax: number },
): Promise<EInvoiceFigures> {
  const pdf = createChromiumRenderer({ poolSize: opts.poolSize });
  const db = new Db(createSql(url, { max: opts.poolMax }), opts.poolMax);
  const documents = createPostgresDocumentStore();
  const app = await buildApp({
    db,
    keyring,
    pdf,
    documents,
    clock: realClock,
    mailDispatch: { dispatch: () => Promise.reject(new Error('the e-invoice bench does not send')) },
    mailDomain: 'faktura.invalid',
    config: { rateLimitDefault: 0, rateLimitDocument: 0, authCacheTtlMs: 60_000, logLevel: 'warn' },
  });
  try {
    const org = await db.tx((tx) =>
      createOrganization(tx, { name: 'Bench Bageri ApS', cvr: '12345678', sandbox: true, street: 'Nørregade 1', postalCode: '8000', city: 'Aarhus C', bankReg: '1234', bankAccount: '0001234567' }),
    );
    const auth = { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/json' };
    const post = async (url: string, key: string, payload: object): Promise<string> => {
      const res = await app.inject({ method: 'POST', url, headers: { ...auth, 'idempotency-key': `bench-einvoice-${process.pid}-${key}` }, payload });
      if (res.statusCode !== 201) throw new Error(`POST ${url} answered ${res.statusCode}: ${res.body}`);
      return (JSON.parse(res.body) as { data: { id: string } }).data.id;
    };
    // The language is given so that the PDF views below are the ones the issue rendered (Danish).
    const address = { street: 'Rådhuspladsen 1', postalCode: '1550', city: 'København V' };
    const customers = [
      await post('/v1/customers', 'customer-gln', { type: 'company', name: 'Kommune A', cvr: '87654321', language: 'da', address, ean: GLN }),
      await post('/v1/customers', 'customer-peppol', { type: 'company', name: 'Kunde B A/S', cvr: '12345674', language: 'da', address, peppolId: '0184:DK12345678' }),
    ];
    const ids: string[] = [];
    for (const [c, customerId] of customers.entries()) {
      for (let i = 0; i < INVOICES_PER_CUSTOMER; i++) {
        // A customer with an e-invoice address needs the buyer's reference to be issued to (docs/einvoicing.md).
        ids.push(await post('/v1/invoices?issue=true', `invoice-${c}-${i}`, { customerId, lines: LINES, buyerReference: `Indkøb ${c}-${i}` }));
      }
    }

    // What each side starts from, loaded once per invoice, outside the loops: the e-invoice's source as the route's
    // first build loads it (the issued snapshot and the stored PDF), and the PDF's view as the issue rendered it.
    const loaded = await db.read(async (sql) => {
      const out: { source: EInvoiceSource; view: InvoiceDocumentView }[] = [];
      for (const id of ids) {
        const row = await issuedRow(sql, org.organizationId, id, 'invoice');
        out.push({
          source: await loadEInvoiceSource(sql, documents, org.organizationId, row),
          // The organisation has no logo, so the view had none either.
          view: { ...(await frozenDocumentView(sql, org.organizationId, row, { language: 'da', email: null })), logo: null },
        });
      }
      return out;
    });
    const sources = loaded.map((l) => l.source);
    const views = loaded.map((l) => l.view);
    const meanPdfBytes = sources.reduce((s, x) => s + x.pdf.length, 0) / sources.length;

    // Checked once before loading: the route's first answer in each profile is exactly what the build gives from the
    // same source (the build is a function of the issued snapshot), so E measures what the route stores.
    const meanBytes = new Map<EInvoiceProfile, number>();
    for (const profile of EINVOICE_PROFILES) {
      let total = 0;
      for (const [i, id] of ids.entries()) {
        const res = await app.inject({ method: 'GET', url: `/v1/invoices/${id}/einvoice?profile=${profile}`, headers: { authorization: auth.authorization } });
        if (res.statusCode !== 200) throw new Error(`GET …/einvoice?profile=${profile} answered ${res.statusCode}: ${res.body}`);
        const built = buildEInvoice(sources[i]!, profile);
        if (!res.rawPayload.equals(built)) throw new Error(`the ${profile} e-invoice of ${id} differs from the one built from its source`);
        total += built.length;
      }
      meanBytes.set(profile, total / ids.length);
    }

    let r = 0;
    const renderOnce = async () => {
      const view = views[r++ % views.length]!;
      await pdf.render(view.kind, view);
    };
    await closedLoop(opts.concurrency, opts.warmupSec, renderOnce);
    const renderer = await closedLoop(opts.concurrency, opts.durationSec, renderOnce);

    const profiles: EInvoiceProfileFigures[] = [];
    for (const profile of EINVOICE_PROFILES) {
      let b = 0;
      // Synchronous, as in the route: the callers take turns on this thread, so a build's latency includes theirs.
      const buildOnce = async () => void buildEInvoice(sources[b++ % sources.length]!, profile);
      await closedLoop(opts.concurrency, opts.warmupSec, buildOnce);
      const build = await closedLoop(opts.concurrency, opts.durationSec, buildOnce);
      let g = 0;
      const routeOnce = async () => {
        const res = await app.inject({
          method: 'GET', url: `/v1/invoices/${ids[g++ % ids.length]!}/einvoice?profile=${profile}`, headers: { authorization: auth.authorization },
        });
        if (res.statusCode !== 200) throw new Error(`GET …/einvoice?profile=${profile} answered ${res.statusCode}: ${res.body}`);
      };
      await closedLoop(opts.concurrency, opts.warmupSec, routeOnce);
      const route = await closedLoop(opts.concurrency, opts.durationSec, routeOnce);
      const ratio = build.perSec / renderer.perSec;
      profiles.push({ profile, build, route, meanBytes: meanBytes.get(profile)!, ratio, pass: ratio >= 1 });
    }
    return {
      concurrency: opts.concurrency,
      durationSec: opts.durationSec,
      poolSize: opts.poolSize,
      invoices: ids.length,
      meanPdfBytes,
      renderer,
      profiles,
      target: 1,
    };
  } finally {
    await app.close();
    await pdf.close();
    await db.close();
  }
}

export function formatEInvoice(f: EInvoiceFigures): string {
  const row = (name: string, r: Loop) =>
    `  ${name.padEnd(50)} ${r.perSec.toFixed(1).padStart(8)}/s   p50 ${r.p50Ms.toFixed(2).padStart(7)} ms   p99 ${r.p99Ms.toFixed(2).padStart(7)} ms`;
  const kb = (bytes: number) => `${(bytes / 1024).toFixed(0)} KiB`;
  return [
    `E-invoices (${f.invoices} issued invoices, 3 lines, ${f.concurrency} concurrent callers, renderer pool ${f.poolSize}, ${f.durationSec} s each; ` +
      `PDF ${kb(f.meanPdfBytes)})`,
    row('R: renderer alone (PDFs)', f.renderer),
    ...f.profiles.flatMap((p) => [
      row(`E: buildEInvoice ${p.profile} (${kb(p.meanBytes)})`, p.build),
      row(`   GET …/einvoice?profile=${p.profile} (stored)`, p.route),
      `  ${p.profile}: ratio E/R ${p.ratio.toFixed(2)}   target ≥ ${f.target} × R   ${p.pass ? 'PASS' : 'FAIL'}`,
    ]),
  ].join('\n');
}
