import { DomainError, type ErrorDetail } from '../shared/errors.ts';

/**
 * A customer's e-invoice address (docs/einvoicing.md, "Customers"): where NemHandel or Peppol delivers its e-invoices.
 * `ean` is a GLN (13 digits, the last the GS1 check digit of the first 12), the address public buyers in Denmark are
 * known by; `peppolId` is a Peppol participant id `<scheme>:<identifier>`. A customer with either has an e-invoice
 * address; with both, the GLN wins (scheme 0088). The schema checks the shapes (contracts/customers.ts); the check
 * digits and each scheme's own rules are checked here.
 */
export interface EInvoiceAddress {
  /** The ISO 6523 identifier scheme: 0088 GLN, 0184 CVR, 0198 Danish VAT number, or another Peppol scheme. */
  scheme: string;
  identifier: string;
}

/** The GS1 check digit of the digits before it (GLN, GTIN): weights 3, 1, 3, … from the rightmost payload digit. */
export function gs1CheckDigit(payload: string): number {
  let sum = 0;
  for (let i = 0; i < payload.length; i++) {
    const digit = Number(payload[payload.length - 1 - i]);
    sum += digit * (i % 2 === 0 ? 3 : 1);
  }
  return (10 - (sum % 10)) % 10;
}

/** A 13-digit GLN whose last digit is the GS1 check digit of the first 12. */
export const isGln = (value: string): boolean => /^[0-9]{13}$/.test(value) && gs1CheckDigit(value.slice(0, 12)) === Number(value[12]);

/** Why a Peppol participant id is refused, or null when it is good. */
export function peppolIdProblem(value: string): string | null {
  const m = /^([0-9]{4}):(.+)$/.exec(value);
  if (!m) return 'must be "<scheme>:<identifier>" with a 4-digit scheme';
  const [, scheme, identifier] = m as unknown as [string, string, string];
  switch (scheme) {
    case '0184':
      return /^(DK)?[0-9]{8}$/.test(identifier) ? null : 'scheme 0184 needs a CVR number: 8 digits, or DK and 8 digits';
    case '0088':
      return isGln(identifier) ? null : 'scheme 0088 needs a GLN: 13 digits whose last is the GS1 check digit';
    case '0198':
      return /^DK[0-9]{8}$/.test(identifier) ? null : 'scheme 0198 needs a Danish VAT number: DK and 8 digits';
    default:
      return /^[A-Za-z0-9.-]{1,50}$/.test(identifier) ? null : 'the identifier must be 1..50 characters of A-Z, a-z, 0-9, "." and "-"';
  }
}

/**
 * 400 validation_failed for an `ean` or `peppolId` its scheme refuses, one detail per field, at `at` + `/ean` or
 * `/peppolId` (`/customer` for an inline customer on an invoice). Absent and null pass.
 */
export function assertEInvoiceFields(input: { ean?: string | null; peppolId?: string | null }, at = ''): void {
  const details: ErrorDetail[] = [];
  if (typeof input.ean === 'string' && !isGln(input.ean)) {
    details.push({ path: `${at}/ean`, message: 'must be 13 digits whose last is the GS1 check digit of the first 12' });
  }
  if (typeof input.peppolId === 'string') {
    const problem = peppolIdProblem(input.peppolId);
    if (problem) details.push({ path: `${at}/peppolId`, message: problem });
  }
  const first = details[0];
  if (first) throw new DomainError('validation_failed', `${first.path} ${first.message}.`, { details });
}

/** The e-invoice address of a customer (or of a buyer as frozen at issue): the GLN when there is one, else the Peppol id. */
export function eInvoiceAddress(party: { ean?: string | null; peppolId?: string | null }): EInvoiceAddress | null {
  if (party.ean) return { scheme: '0088', identifier: party.ean };
  if (!party.peppolId) return null;
  const colon = party.peppolId.indexOf(':');
  return { scheme: party.peppolId.slice(0, colon), identifier: party.peppolId.slice(colon + 1) };
}
