import { missingSellerDetails, type SellerDetails } from '../law/danish-law.ts';
import { DomainError, type ErrorDetail } from '../shared/errors.ts';

/** The seller as loaded for a document: the organisation's columns that § 58 asks for. */
export type SellerIdentity = SellerDetails;

/** The update-org flag that sets each seller detail, named in a refusal. */
const UPDATE_ORG_FLAG: { readonly [F in keyof SellerDetails]: string } = {
  name: '--name',
  street: '--street',
  postalCode: '--postal-code',
  city: '--city',
  cvr: '--cvr',
};

/**
 * Momsbekendtgørelsen § 58 (the list: services/law/danish-law.ts): an invoice, and a credit note likewise, shows the
 * seller's name, address and CVR number. An organisation without them cannot issue either: 422
 * `seller_details_incomplete`, one `details` entry per missing field (`/seller/street`, …). Checked before a number
 * is taken, so a refusal uses no number. The operator sets them with `npm run admin -- update-org`.
 */
export function assertSellerDetailsComplete(seller: SellerIdentity): void {
  const details: ErrorDetail[] = missingSellerDetails(seller).map((field) => ({
    path: `/seller/${field}`,
    message: `is required on every invoice and credit note; the operator sets it with \`npm run admin -- update-org --org ID ${UPDATE_ORG_FLAG[field]} …\``,
  }));
  if (details.length === 0) return;
  throw new DomainError(
    'seller_details_incomplete',
    "The organisation's name, street, postal code, city and CVR number must be set before it issues invoices or credit notes " +
      '(Momsbekendtgørelsen § 58); the operator sets them with `npm run admin -- update-org`.',
    { details },
  );
}
