import { createHash } from 'node:crypto';
import { SaxesParser } from 'saxes';

/**
 * The camt.053 reader (docs/bank-payments.md, "Bank statements (camt.053)"): an ISO 20022 BankToCustomerStatement
 * (`BkToCstmrStmt`, message versions .001.02 to .001.08) as text in, its statements' entries as plain values out.
 * Pure: no database, no clock; tested from fixtures (test/unit/read-camt053.test.ts).
 *
 * The XML is read by saxes, a strict non-validating parser: it processes no DTD and fetches nothing, and an entity it
 * does not know is an error. On top of that the reader refuses any DOCTYPE (a statement has none, and a DOCTYPE is
 * how entity expansion and external-entity attacks begin) and nesting deeper than MAX_DEPTH elements (a statement
 * nests about a dozen), before the elements it has read so far grow further. Anything it refuses is a `CamtError`
 * with the reason and where in the document it is.
 *
 * Batch entries: an entry whose details hold several transactions (`NtryDtls/TxDtls`), each with its own amount
 * adding up to the entry's, is read as one item per transaction, each with its own amount and remittance, so each is
 * matched on its own. Its identity is the entry's plus `/` and the transaction's position (1, 2, …). A batch whose
 * transactions lack their amounts, or whose amounts do not add up, is one item: the entry.
 */

export const MAX_DEPTH = 64;

/** The message versions read: camt.053.001.02 to camt.053.001.08. */
export const CAMT053_NAMESPACES = [2, 3, 4, 5, 6, 7, 8].map((v) => `urn:iso:std:iso:20022:tech:xsd:camt.053.001.0${v}`);

export class CamtError extends Error {
  /** Where: a JSON Pointer over the document's elements from the root's child (`/BkToCstmrStmt/Stmt/0/Ntry/2/Amt`), or '' for the document. */
  readonly path: string;

  constructor(message: string, path = '') {
    super(message);
    this.name = 'CamtError';
    this.path = path;
  }
}

export type CreditDebit = 'CRDT' | 'DBIT';

/** One entry, or one transaction of a batch entry: what is imported, matched and listed. */
export interface StatementItem {
  /** The statement (Stmt/Id) it came from. */
  statementId: string;
  /** Unique per account across imports (see the module's comment). */
  identity: string;
  bookingDate: string | null;
  /** Credit or debit. */
  direction: CreditDebit;
  /** Whether the bank has booked it (`BOOK`): pending and information-only entries are not money yet. */
  booked: boolean;
  currency: string;
  /** In hundredths of the currency, never negative (the direction says which way). */
  amountMinor: number;
  /** The first structured creditor reference (RmtInf/Strd/CdtrRefInf/Ref), as given. */
  reference: string | null;
  /** The unstructured remittance (RmtInf/Ustrd), its lines joined by newlines. */
  remittance: string | null;
  /** Every other text that may carry a payment id: further creditor references, AddtlRmtInf, AddtlTxInf, AddtlNtryInf. */
  otherTexts: string[];
}

export interface CamtStatements {
  /** The message version read (2..8). */
  version: number;
  /** The account of every statement in the document: its IBAN, else its other identification. */
  accountId: string;
  statementIds: string[];
  from: string | null;
  to: string | null;
  items: StatementItem[];
}

interface Element {
  name: string;
  text: string;
  children: Element[];
  attributes: Record<string, string>;
}

/** The document as elements (local names, in the message's namespace), with the limits above. */
function parse(xml: string): { ns: string; root: Element } {
  const parser = new SaxesParser({ xmlns: true, position: true });
  const stack: Element[] = [];
  let root: Element | undefined;
  let ns = '';
  let failure: CamtError | undefined;
  const fail = (message: string): never => {
    throw new CamtError(`${message} (line ${parser.line}, column ${parser.column})`);
  };
  parser.on('error', (err) => {
    // saxes' message starts with where; said once, at the end.
    throw new CamtError(`The document is not well-formed XML: ${err.message.replace(/^(?:[^:]*:)?\d+:\d+: /, '').replace(/\.$/, '')} (line ${parser.line}, column ${parser.column})`);
  });
  parser.on('doctype', () => fail('The document has a DOCTYPE, which a camt.053 statement never has: it is not read'));
  parser.on('opentag', (tag) => {
    if (stack.length >= MAX_DEPTH) fail(`The document nests deeper than ${MAX_DEPTH} elements`);
    const el: Element = { name: tag.local ?? tag.name, text: '', children: [], attributes: {} };
    for (const a of Object.values(tag.attributes)) el.attributes[a.local] = a.value;
    if (stack.length === 0) {
      root = el;
      ns = tag.uri ?? '';
    } else stack[stack.length - 1]!.children.push(el);
    stack.push(el);
  });
  parser.on('text', (text) => {
    if (stack.length > 0) stack[stack.length - 1]!.text += text;
  });
  parser.on('cdata', (text) => {
    if (stack.length > 0) stack[stack.length - 1]!.text += text;
  });
  parser.on('closetag', () => {
    stack.pop();
  });
  try {
    parser.write(xml).close();
  } catch (err) {
    failure = err instanceof CamtError ? err : new CamtError(`The document is not well-formed XML: ${(err as Error).message}`);
  }
  if (failure) throw failure;
  if (!root) throw new CamtError('The document has no root element');
  return { ns, root };
}

const kids = (el: Element | undefined, name: string): Element[] => (el ? el.children.filter((c) => c.name === name) : []);
const kid = (el: Element | undefined, name: string): Element | undefined => el?.children.find((c) => c.name === name);
/** The trimmed text at a path of child names, or undefined. */
const text = (el: Element | undefined, ...path: string[]): string | undefined => {
  let at = el;
  for (const name of path) at = kid(at, name);
  const t = at?.text.trim();
  return t === undefined || t === '' ? undefined : t;
};

const DATE = /^(\d{4}-\d{2}-\d{2})/;

/** The date of an ISODate or ISODateTime as written (its local date), or null when there is none. */
function dateText(raw: string | undefined, path: string): string | null {
  if (raw === undefined) return null;
  const m = DATE.exec(raw);
  const valid = m !== null && !Number.isNaN(Date.parse(`${m[1]}T00:00:00Z`)) && new Date(`${m[1]}T00:00:00Z`).toISOString().slice(0, 10) === m[1];
  if (!valid) throw new CamtError(`Not a date: ${raw}`, path);
  return m[1]!;
}

/** The date of a date choice: `Dt`, or the date part of `DtTm`. */
const dateOf = (el: Element | undefined, path: string): string | null => dateText(text(el, 'Dt') ?? text(el, 'DtTm'), path);

/**
 * An amount (ISO 20022 `ActiveOrHistoricCurrencyAndAmount`: up to 18 digits, at most 5 after the point) in
 * hundredths, exactly. DKK has two decimals: a third that is not 0 is an error; another currency is rounded half away
 * from zero (its items are ignored, the amount only shown).
 */
export function amountInMinorUnits(value: string, currency: string, path: string): number {
  const m = /^(\d{1,18})(?:\.(\d{1,5}))?$/.exec(value);
  if (!m) throw new CamtError(`Not an amount: ${value}`, path);
  const fraction = (m[2] ?? '').padEnd(5, '0');
  const rest = Number(fraction.slice(2));
  if (currency === 'DKK' && rest !== 0) throw new CamtError(`A DKK amount has at most two decimals: ${value}`, path);
  const minor = BigInt(m[1]!) * 100n + BigInt(fraction.slice(0, 2)) + (rest >= 500 ? 1n : 0n);
  if (minor > BigInt(Number.MAX_SAFE_INTEGER)) throw new CamtError(`The amount is too large: ${value}`, path);
  return Number(minor);
}

/** An `Amt` element with its `Ccy`. */
function amountOf(el: Element | undefined, path: string): { currency: string; minor: number } | undefined {
  if (!el) return undefined;
  const currency = el.attributes.Ccy ?? '';
  if (!/^[A-Z]{3}$/.test(currency)) throw new CamtError(`The amount has no currency code (Ccy): ${currency}`, path);
  return { currency, minor: amountInMinorUnits(el.text.trim(), currency, path) };
}

function creditDebit(value: string | undefined, path: string): CreditDebit {
  if (value !== 'CRDT' && value !== 'DBIT') throw new CamtError(`CdtDbtInd is CRDT or DBIT, not ${value ?? 'missing'}`, path);
  return value;
}

/** An entry's status: a code (`<Sts>BOOK</Sts>`, .02 to .07) or a choice of a code (`<Sts><Cd>BOOK</Cd></Sts>`, .08). */
const entryStatus = (ntry: Element): string | undefined => text(ntry, 'Sts', 'Cd') ?? text(ntry, 'Sts') ?? text(ntry, 'Sts', 'Prtry');

interface Remittance {
  reference: string | null;
  ustrd: string[];
  other: string[];
}

function remittanceOf(holders: Element[]): Remittance {
  const refs: string[] = [];
  const ustrd: string[] = [];
  const other: string[] = [];
  for (const holder of holders) {
    for (const rmt of kids(holder, 'RmtInf')) {
      for (const u of kids(rmt, 'Ustrd')) if (u.text.trim() !== '') ustrd.push(u.text.trim());
      for (const s of kids(rmt, 'Strd')) {
        for (const c of kids(s, 'CdtrRefInf')) {
          const r = text(c, 'Ref');
          if (r !== undefined) refs.push(r);
        }
        for (const a of kids(s, 'AddtlRmtInf')) if (a.text.trim() !== '') other.push(a.text.trim());
      }
    }
    for (const name of ['AddtlTxInf', 'AddtlNtryInf']) for (const a of kids(holder, name)) if (a.text.trim() !== '') other.push(a.text.trim());
  }
  return { reference: refs[0] ?? null, ustrd, other: [...refs.slice(1), ...other] };
}

const sha256 = (s: string): string => createHash('sha256').update(s, 'utf8').digest('hex');

/** Reads a camt.053 document. Throws `CamtError` for anything else, or anything it cannot read. */
export function readCamt053(xml: string): CamtStatements {
  const { ns, root } = parse(xml);
  if (root.name !== 'Document') throw new CamtError(`The root element is ${root.name}, not an ISO 20022 Document`);
  const version = CAMT053_NAMESPACES.indexOf(ns);
  if (version < 0) {
    const message = /^urn:iso:std:iso:20022:tech:xsd:([a-z]{4}\.\d{3}\.\d{3}\.\d{2})$/.exec(ns)?.[1];
    throw new CamtError(
      message
        ? `The document is a ${message} message, not a camt.053 bank statement (versions 001.02 to 001.08)`
        : `The document's namespace (${ns || 'none'}) is not a camt.053 bank statement's (versions 001.02 to 001.08)`,
    );
  }
  const body = kid(root, 'BkToCstmrStmt');
  if (!body) throw new CamtError('The document has no BkToCstmrStmt', '/BkToCstmrStmt');
  const stmts = kids(body, 'Stmt');
  if (stmts.length === 0) throw new CamtError('The document has no statement (Stmt)', '/BkToCstmrStmt/Stmt');

  let accountId: string | undefined;
  const statementIds: string[] = [];
  const items: StatementItem[] = [];
  const periods: { from: string | null; to: string | null }[] = [];
  stmts.forEach((stmt, s) => {
    const at = `/BkToCstmrStmt/Stmt/${s}`;
    const id = text(stmt, 'Id');
    if (id === undefined) throw new CamtError('The statement has no Id', `${at}/Id`);
    const account = text(stmt, 'Acct', 'Id', 'IBAN') ?? text(stmt, 'Acct', 'Id', 'Othr', 'Id');
    if (account === undefined) throw new CamtError('The statement has no account (Acct/Id/IBAN or Acct/Id/Othr/Id)', `${at}/Acct`);
    if (account.length > 70) throw new CamtError('The account identification is longer than 70 characters', `${at}/Acct`);
    if (accountId !== undefined && account !== accountId) {
      throw new CamtError('All statements of one document must be of the same account: import each account\'s statements on their own', `${at}/Acct`);
    }
    accountId = account;
    statementIds.push(id);
    periods.push({
      from: dateText(text(stmt, 'FrToDt', 'FrDtTm'), `${at}/FrToDt/FrDtTm`),
      to: dateText(text(stmt, 'FrToDt', 'ToDtTm'), `${at}/FrToDt/ToDtTm`),
    });

    // Identities by SHA-256 repeat when one statement has two entries alike (same day, amount and text, no
    // reference): the second and later get their occurrence number, so neither is taken for the other.
    const seenHashes = new Map<string, number>();
    kids(stmt, 'Ntry').forEach((ntry, n) => {
      const ep = `${at}/Ntry/${n}`;
      const amt = amountOf(kid(ntry, 'Amt'), `${ep}/Amt`);
      if (!amt) throw new CamtError('The entry has no amount (Amt)', `${ep}/Amt`);
      const direction = creditDebit(text(ntry, 'CdtDbtInd'), `${ep}/CdtDbtInd`);
      const status = entryStatus(ntry);
      if (status === undefined) throw new CamtError('The entry has no status (Sts)', `${ep}/Sts`);
      const booked = status === 'BOOK';
      const bookingDate = dateOf(kid(ntry, 'BookgDt'), `${ep}/BookgDt`) ?? dateOf(kid(ntry, 'ValDt'), `${ep}/ValDt`);
      const txs = kids(ntry, 'NtryDtls').flatMap((d) => kids(d, 'TxDtls'));
      const whole = remittanceOf([ntry, ...txs]);
      const texts = (r: Remittance) => [r.reference ?? '', ...r.ustrd, ...r.other].join('\n');

      let identity = text(ntry, 'AcctSvcrRef') !== undefined ? `a:${text(ntry, 'AcctSvcrRef')}` : text(ntry, 'NtryRef') !== undefined ? `n:${text(ntry, 'NtryRef')}` : undefined;
      if (identity === undefined) {
        const hash = sha256(`${bookingDate ?? ''}\n${direction}\n${amt.currency}\n${amt.minor}\n${texts(whole)}`);
        const seen = (seenHashes.get(hash) ?? 0) + 1;
        seenHashes.set(hash, seen);
        identity = `h:${hash}${seen > 1 ? `#${seen}` : ''}`;
      }
      const base = { statementId: id, bookingDate, booked };

      // A batch split into its transactions when each has its amount and they add up to the entry's.
      if (txs.length > 1) {
        const parts = txs.map((tx, t) => {
          const tp = `${ep}/NtryDtls/TxDtls/${t}`;
          const a = amountOf(kid(tx, 'Amt'), `${tp}/Amt`) ?? amountOf(kid(kid(kid(tx, 'AmtDtls'), 'TxAmt'), 'Amt'), `${tp}/AmtDtls/TxAmt/Amt`);
          const d = text(tx, 'CdtDbtInd');
          return { tx, amount: a, direction: d === undefined ? direction : creditDebit(d, `${tp}/CdtDbtInd`) };
        });
        const complete = parts.every((p) => p.amount && p.amount.currency === amt.currency);
        const sum = complete ? parts.reduce((acc, p) => acc + (p.direction === direction ? 1 : -1) * p.amount!.minor, 0) : -1;
        if (complete && sum === amt.minor) {
          parts.forEach((p, t) => {
            const r = remittanceOf([p.tx]);
            items.push({
              ...base, identity: `${identity}/${t + 1}`, direction: p.direction, currency: p.amount!.currency, amountMinor: p.amount!.minor,
              reference: r.reference, remittance: r.ustrd.length > 0 ? r.ustrd.join('\n') : null,
              // The entry's own words belong to each of its transactions.
              otherTexts: [...r.other, ...remittanceOf([ntry]).other],
            });
          });
          return;
        }
      }
      items.push({
        ...base, identity, direction, currency: amt.currency, amountMinor: amt.minor,
        reference: whole.reference, remittance: whole.ustrd.length > 0 ? whole.ustrd.join('\n') : null, otherTexts: whole.other,
      });
    });
  });

  for (const item of items) if (item.identity.length > 120) item.identity = `l:${sha256(item.identity)}`;
  const dates = (pick: (p: { from: string | null; to: string | null }) => string | null, fallback: (string | null)[]) => {
    const given = periods.map(pick).filter((d): d is string => d !== null);
    return given.length > 0 ? given : fallback.filter((d): d is string => d !== null);
  };
  const bookingDates = items.map((i) => i.bookingDate);
  const froms = dates((p) => p.from, bookingDates).sort();
  const tos = dates((p) => p.to, bookingDates).sort();
  return {
    version: version + 2,
    accountId: accountId!,
    statementIds,
    from: froms[0] ?? null,
    to: tos[tos.length - 1] ?? null,
    items,
  };
}
