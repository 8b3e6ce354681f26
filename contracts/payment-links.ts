import { Type, type Static } from 'typebox';
import { Uuid } from './common.ts';

/**
 * docs/api-conventions.md, "Payment links, pay page and receipts": one stable link per issued invoice, for the hosted
 * pay page.
 */
export const PaymentLink = Type.Object(
  {
    invoiceId: Uuid,
    url: Type.String({ format: 'uri', description: 'The hosted pay page of this invoice: https://{payment domain}/{reference} once the organisation\'s payment domain is verified (GET /v1/payment-domain), else the pay base URL plus /p/{reference}' }),
    reference: Type.String({ pattern: '^[0-9a-f]{32}$', description: '128 random bits as 32 lowercase hex characters; the link\'s path' }),
    paymentCode: Type.String({
      pattern: '^[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}$',
      description:
        '8 characters of Crockford base32, shown as XXXX-XXXX, typed on the pay page (accepted with or without the hyphen, in any case)',
    }),
    createdAt: Type.String({ format: 'date-time', description: 'When the link was first requested' }),
  },
  { title: 'PaymentLink' },
);
export type PaymentLink = Static<typeof PaymentLink>;
