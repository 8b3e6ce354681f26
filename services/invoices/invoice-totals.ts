import { DomainError, type ErrorDetail } from '../shared/errors.ts';

/**
 * Invoice arithmetic (docs/api-conventions.md, "Invoices and credit notes", Arithmetic), exact and pure.
 *
 * - Line base = round(quantity × unitPriceOere); discount = the amount given, or round(base × percent / 100);
 *   line net = base − discount. Rounding is half away from zero, to whole øre.
 * - VAT is computed per rate over the sum of the nets at that rate (EN 16931 BR-CO-17), rounded the same way.
 *   Each line also shows its own VAT for information; the invoice total uses the per-rate figure.
 * - Quantities are exact decimals; every product is computed in BigInt, so nothing is lost however large the
 *   numbers get. A total that would not fit the API's integers (JSON numbers are exact only up to 2^53 − 1) is
 *   refused with 422 amount_out_of_range instead of being rounded.
 */
export interface LineInput {
  quantity: number;
  unitPriceOere: number;
  vatRateBps?: number;
  vatExemptionReason?: string | null;
  discount?: { type: 'percent' | 'amount'; value: number } | null;
}

export interface LineAmounts {
  quantity: string;
  vatRateBps: number;
  discountOere: number;
  netOere: number;
  vatOere: number;
  grossOere: number;
}

export interface InvoiceTotals {
  lines: LineAmounts[];
  netOere: number;
  vatOere: number;
  grossOere: number;
  vatSummary: { vatRateBps: number; netOere: number; vatOere: number }[];
  exemptSummary: { reason: string; netOere: number }[];
}

/** The standard Danish VAT rate, used for a line that names none. */
export const DEFAULT_VAT_RATE_BPS = 2500;

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** Exact decimal text of a JSON number, without exponent: 1e-7 → "0.0000001", 1.5 → "1.5". */
export function decimalText(n: number): string {
  const s = String(n);
  const m = /^(\d+)(?:\.(\d+))?e([+-]\d+)$/i.exec(s);
  if (!m) return s;
  const digits = m[1]! + (m[2] ?? '');
  const point = m[1]!.length + Number(m[3]);
  if (point <= 0) return `0.${'0'.repeat(-point)}${digits}`.replace(/0+$/, '');
  if (point >= digits.length) return digits + '0'.repeat(point - digits.length);
  return `${digits.slice(0, point)}.${digits.slice(point)}`;
}

/** A non-negative decimal as a scaled integer: "1.25" → { units: 125n, scale: 100n }. */
function scaled(text: string): { units: bigint; scale: bigint } {
  const [whole, frac = ''] = text.split('.') as [string, string?];
  return { units: BigInt(whole + frac), scale: 10n ** BigInt(frac.length) };
}

/** numerator / denominator rounded half away from zero (denominator > 0). */
export function divRound(numerator: bigint, denominator: bigint): bigint {
  const negative = numerator < 0n;
  const abs = negative ? -numerator : numerator;
  const q = (abs * 2n + denominator) / (denominator * 2n);
  return negative ? -q : q;
}

const toNumber = (v: bigint, path: string): number => {
  if (v > MAX_SAFE || v < -MAX_SAFE) {
    throw new DomainError('amount_out_of_range', 'The amounts of this invoice are larger than the API can represent exactly.', {
      details: [{ path, message: `must not exceed ${Number.MAX_SAFE_INTEGER} øre` }],
    });
  }
  return Number(v);
};

/** The largest line net (quantity × unit price, less any discount) whose total with VAT at `rate` is still exact. */
export function largestLineNet(rate: number): bigint {
  const r = BigInt(rate);
  let n = (MAX_SAFE * 10000n) / (10000n + r);
  while (n + divRound(n * r, 10000n) > MAX_SAFE) n--;
  while (n + 1n + divRound((n + 1n) * r, 10000n) <= MAX_SAFE) n++;
  return n;
}

/**
 * A line whose total with VAT does not fit the API's integers. Reported at the line, since no one field is at fault
 * (each is within its bounds; their product is not), with the limit its product actually has at its VAT rate.
 */
function lineOutOfRange(path: string, rate: number, discounted: boolean): DomainError {
  const product = discounted ? 'quantity × unitPriceOere less the discount' : 'quantity × unitPriceOere';
  return new DomainError('amount_out_of_range', 'The amounts of this invoice are larger than the API can represent exactly.', {
    details: [{
      path,
      message: `${product} must be at most ${largestLineNet(rate)} øre: with ${rate / 100} % VAT the line then comes to at most ${Number.MAX_SAFE_INTEGER} øre`,
    }],
  });
}

/** Business checks of one line that a JSON schema cannot express; each failure names its place. */
export function checkLine(line: LineInput, path: string): void {
  const rate = line.vatRateBps ?? DEFAULT_VAT_RATE_BPS;
  const fail = (code: 'invalid_vat_rate' | 'vat_exemption_reason_required' | 'vat_exemption_reason_not_allowed' | 'invalid_discount', message: string, detail: ErrorDetail) =>
    new DomainError(code, message, { details: [detail] });
  if (rate < 0 || rate > 10000) {
    throw fail('invalid_vat_rate', 'A VAT rate must be between 0 and 10000 basis points (0–100 %).', {
      path: `${path}/vatRateBps`,
      message: 'must be between 0 and 10000',
    });
  }
  if (rate === 0 && !line.vatExemptionReason) {
    throw fail('vat_exemption_reason_required', 'A line without VAT must say why (vatExemptionReason).', {
      path: `${path}/vatExemptionReason`,
      message: 'is required when vatRateBps is 0',
    });
  }
  if (rate !== 0 && line.vatExemptionReason) {
    throw fail('vat_exemption_reason_not_allowed', 'A VAT exemption reason is only allowed on a line with vatRateBps 0.', {
      path: `${path}/vatExemptionReason`,
      message: 'must be null unless vatRateBps is 0',
    });
  }
  const d = line.discount;
  if (d?.type === 'percent' && d.value > 100) {
    throw fail('invalid_discount', 'A percent discount is between 0 and 100.', { path: `${path}/discount/value`, message: 'must be at most 100' });
  }
  if (d?.type === 'amount') {
    const q = scaled(decimalText(line.quantity));
    // value ≤ quantity × unit price, compared exactly: value × scale ≤ units × price.
    if (BigInt(d.value) * q.scale > q.units * BigInt(line.unitPriceOere)) {
      throw fail('invalid_discount', 'An amount discount cannot exceed the line\'s quantity × unit price.', {
        path: `${path}/discount/value`,
        message: 'must not exceed quantity × unitPriceOere',
      });
    }
  }
}

export function computeTotals(lines: LineInput[]): InvoiceTotals {
  lines.forEach((l, i) => checkLine(l, `/lines/${i}`));
  const byRate = new Map<number, bigint>();
  const byReason = new Map<string, bigint>();
  let net = 0n;
  const out = lines.map((line, i) => {
    const path = `/lines/${i}`;
    const rate = line.vatRateBps ?? DEFAULT_VAT_RATE_BPS;
    const quantity = decimalText(line.quantity);
    const q = scaled(quantity);
    const base = divRound(q.units * BigInt(line.unitPriceOere), q.scale);
    const d = line.discount;
    const discount = !d ? 0n : d.type === 'amount' ? BigInt(d.value) : divRound(base * BigInt(d.value), 100n);
    const lineNet = base - discount;
    const lineVat = divRound(lineNet * BigInt(rate), 10000n);
    if (lineNet + lineVat > MAX_SAFE) throw lineOutOfRange(path, rate, d != null);
    net += lineNet;
    if (rate === 0) byReason.set(line.vatExemptionReason!, (byReason.get(line.vatExemptionReason!) ?? 0n) + lineNet);
    else byRate.set(rate, (byRate.get(rate) ?? 0n) + lineNet);
    return {
      quantity,
      vatRateBps: rate,
      discountOere: toNumber(discount, `${path}/discount`),
      netOere: Number(lineNet),
      vatOere: Number(lineVat),
      grossOere: Number(lineNet + lineVat),
    };
  });
  let vat = 0n;
  const vatSummary = [...byRate.entries()]
    .sort(([a], [b]) => b - a)
    .map(([rate, rateNet]) => {
      const rateVat = divRound(rateNet * BigInt(rate), 10000n);
      vat += rateVat;
      return { vatRateBps: rate, netOere: toNumber(rateNet, '/lines'), vatOere: toNumber(rateVat, '/lines') };
    });
  const exemptSummary = [...byReason.entries()].map(([reason, n]) => ({ reason, netOere: toNumber(n, '/lines') }));
  return {
    lines: out,
    netOere: toNumber(net, '/lines'),
    vatOere: toNumber(vat, '/lines'),
    grossOere: toNumber(net + vat, '/lines'),
    vatSummary,
    exemptSummary,
  };
}
