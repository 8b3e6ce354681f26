/**
 * camt.053 documents for tests, written after the ISO 20022 message definition of BankToCustomerStatement in each
 * version this API reads (camt.053.001.02 … .08), in the schema's element order:
 *
 *   Document/BkToCstmrStmt/GrpHdr(MsgId, CreDtTm)
 *   Stmt(Id, ElctrncSeqNb, CreDtTm, FrToDt(FrDtTm, ToDtTm), Acct(Id(IBAN), Ccy), Bal+, Ntry*)
 *   Ntry(NtryRef?, Amt@Ccy, CdtDbtInd, RvslInd?, Sts, BookgDt(Dt), ValDt(Dt), AcctSvcrRef?, BkTxCd, NtryDtls*, AddtlNtryInf?)
 *   TxDtls(Refs(EndToEndId), Amt@Ccy + CdtDbtInd (.04 on) | AmtDtls/TxAmt/Amt (.02, .03), RltdPties, RmtInf(Ustrd*, Strd*))
 *
 * Differences between versions that the reader must follow: the entry status is a code (`<Sts>BOOK</Sts>`) up to
 * .07 and a choice (`<Sts><Cd>BOOK</Cd></Sts>`) in .08; a transaction's own amount is `AmtDtls/TxAmt/Amt` in .02 and
 * .03, and `Amt` with `CdtDbtInd` from .04 on.
 */

export const VERSIONS = [2, 3, 4, 5, 6, 7, 8] as const;
export type Version = (typeof VERSIONS)[number];

export interface TxFixture {
  amount?: string;
  currency?: string;
  ustrd?: string[];
  /** RmtInf/Strd/CdtrRefInf/Ref. */
  ref?: string;
  addtlRmtInf?: string;
  debtor?: string;
}

export interface EntryFixture {
  amount: string;
  currency?: string;
  direction?: 'CRDT' | 'DBIT';
  status?: 'BOOK' | 'PDNG' | 'INFO';
  bookingDate?: string;
  acctSvcrRef?: string;
  ntryRef?: string;
  /** One transaction (the entry's remittance), or several (a batch). */
  txs?: TxFixture[];
  addtlNtryInf?: string;
}

export interface StatementFixture {
  id: string;
  iban?: string;
  from?: string;
  to?: string;
  entries: EntryFixture[];
}

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export const CAMT053_NS = (v: Version): string => `urn:iso:std:iso:20022:tech:xsd:camt.053.001.0${v}`;

function tx(v: Version, t: TxFixture, entry: EntryFixture, i: number): string {
  const ccy = t.currency ?? entry.currency ?? 'DKK';
  const own = t.amount === undefined
    ? ''
    : v >= 4
      ? `<Amt Ccy="${ccy}">${t.amount}</Amt><CdtDbtInd>${entry.direction ?? 'CRDT'}</CdtDbtInd>`
      : `<AmtDtls><TxAmt><Amt Ccy="${ccy}">${t.amount}</Amt></TxAmt></AmtDtls>`;
  const strd = t.ref !== undefined || t.addtlRmtInf !== undefined
    ? `<Strd>${t.ref !== undefined ? `<CdtrRefInf><Tp><CdOrPrtry><Cd>SCOR</Cd></CdOrPrtry></Tp><Ref>${esc(t.ref)}</Ref></CdtrRefInf>` : ''}` +
      `${t.addtlRmtInf !== undefined ? `<AddtlRmtInf>${esc(t.addtlRmtInf)}</AddtlRmtInf>` : ''}</Strd>`
    : '';
  const rmt = (t.ustrd ?? []).length > 0 || strd ? `<RmtInf>${(t.ustrd ?? []).map((u) => `<Ustrd>${esc(u)}</Ustrd>`).join('')}${strd}</RmtInf>` : '';
  return `<TxDtls><Refs><EndToEndId>E2E-${i + 1}</EndToEndId></Refs>${own}` +
    `<RltdPties><Dbtr><Nm>${esc(t.debtor ?? 'Kunde A/S')}</Nm></Dbtr></RltdPties>${rmt}</TxDtls>`;
}

function entry(v: Version, e: EntryFixture): string {
  const status = e.status ?? 'BOOK';
  const sts = v >= 8 ? `<Sts><Cd>${status}</Cd></Sts>` : `<Sts>${status}</Sts>`;
  const date = e.bookingDate ?? '2026-11-02';
  const txs = e.txs ?? [];
  const batch = txs.length > 1 ? `<Btch><NbOfTxs>${txs.length}</NbOfTxs></Btch>` : '';
  return `<Ntry>${e.ntryRef !== undefined ? `<NtryRef>${esc(e.ntryRef)}</NtryRef>` : ''}` +
    `<Amt Ccy="${e.currency ?? 'DKK'}">${e.amount}</Amt><CdtDbtInd>${e.direction ?? 'CRDT'}</CdtDbtInd>` +
    `${sts}` +
    `<BookgDt><Dt>${date}</Dt></BookgDt><ValDt><Dt>${date}</Dt></ValDt>` +
    `${e.acctSvcrRef !== undefined ? `<AcctSvcrRef>${esc(e.acctSvcrRef)}</AcctSvcrRef>` : ''}` +
    `<BkTxCd><Domn><Cd>PMNT</Cd><Fmly><Cd>RCDT</Cd><SubFmlyCd>DMCT</SubFmlyCd></Fmly></Domn></BkTxCd>` +
    `${txs.length > 0 ? `<NtryDtls>${batch}${txs.map((t, i) => tx(v, t, e, i)).join('')}</NtryDtls>` : ''}` +
    `${e.addtlNtryInf !== undefined ? `<AddtlNtryInf>${esc(e.addtlNtryInf)}</AddtlNtryInf>` : ''}</Ntry>`;
}

function statement(v: Version, s: StatementFixture, n: number): string {
  const iban = s.iban ?? 'DK5000400440116243';
  const from = s.from ?? '2026-11-01';
  const to = s.to ?? '2026-11-30';
  return `<Stmt><Id>${esc(s.id)}</Id><ElctrncSeqNb>${n + 1}</ElctrncSeqNb><CreDtTm>${to}T23:59:00+01:00</CreDtTm>` +
    `<FrToDt><FrDtTm>${from}T00:00:00+01:00</FrDtTm><ToDtTm>${to}T23:59:59+01:00</ToDtTm></FrToDt>` +
    `<Acct><Id><IBAN>${iban}</IBAN></Id><Ccy>DKK</Ccy></Acct>` +
    `<Bal><Tp><CdOrPrtry><Cd>OPBD</Cd></CdOrPrtry></Tp><Amt Ccy="DKK">0.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>${from}</Dt></Dt></Bal>` +
    `<Bal><Tp><CdOrPrtry><Cd>CLBD</Cd></CdOrPrtry></Tp><Amt Ccy="DKK">0.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>${to}</Dt></Dt></Bal>` +
    `${s.entries.map((e) => entry(v, e)).join('')}</Stmt>`;
}

/** A camt.053 document of `version` with the statements given. */
export function camt053(version: Version, statements: StatementFixture[]): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<Document xmlns="${CAMT053_NS(version)}" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">` +
    `<BkToCstmrStmt><GrpHdr><MsgId>MSG-${statements[0]?.id ?? 'X'}</MsgId><CreDtTm>2026-11-30T23:59:00+01:00</CreDtTm></GrpHdr>` +
    `${statements.map((s, i) => statement(version, s, i)).join('')}</BkToCstmrStmt></Document>\n`;
}
