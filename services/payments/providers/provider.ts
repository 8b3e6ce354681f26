/**
 * The payment-provider port. Card acquirers and mobile wallets differ in their APIs but share one shape, and the pay
 * service sees only this: it opens a hosted checkout for an amount and sends the customer there (card data and wallet
 * approvals stay with the provider, never on our page or in the API), then learns the outcome from the provider's
 * signed callbacks. The customer's return to the pay page decides nothing: only a verified callback books a payment.
 */

/** The channel a payment came through; becomes the payment's `source`. */
export type PaymentMethod = 'card' | 'mobilepay';

export interface CheckoutRequest {
  /** Our checkout session id; the provider echoes it in every event of this checkout (and may use it as its idempotency key). */
  clientReference: string;
  amountOere: number;
  currency: 'DKK';
  method: PaymentMethod;
  language: 'da' | 'en';
  /** Shown by the provider: who is paid, and for what. */
  merchantName: string;
  description: string;
  /** Where the provider sends the customer after paying, and after a failure or a cancel. */
  returnUrl: string;
  cancelUrl: string;
  /** Where the provider delivers its signed events. */
  callbackUrl: string;
}

export interface CheckoutSession {
  providerSessionId: string;
  /** The provider's hosted page the customer is sent to. */
  url: string;
  expiresAt: Date;
}

/** A callback as it arrived: the exact body bytes (signatures cover them) and the headers. */
export interface ProviderCallback {
  headers: Record<string, string | string[] | undefined>;
  rawBody: Buffer;
}

interface EventBase {
  /** The provider's event id: the same on every redelivery of this event. */
  eventId: string;
  /** Our checkout session id, as given in CheckoutRequest.clientReference. */
  clientReference: string;
  providerSessionId: string;
  occurredAt: Date;
}

/** What a verified callback says, in the port's terms. Events the service does not act on are `ignored`. */
export type ProviderEvent =
  | (EventBase & {
      kind: 'payment_succeeded';
      /** The provider's payment id: the booking key, so the payment is booked once however often it is reported. */
      providerPaymentId: string;
      amountOere: number;
      currency: string;
      method: PaymentMethod;
    })
  | (EventBase & { kind: 'payment_failed'; providerPaymentId: string; method: PaymentMethod; reason: string })
  | { kind: 'ignored'; eventId: string; type: string };

export interface PaymentProvider {
  /** Short stable name (the callback path `/callbacks/{name}` and stored with each checkout). */
  readonly name: string;
  /** Origins the customer's browser is sent to (the pay page's Content-Security-Policy allows them as form targets). */
  readonly checkoutOrigins: string[];
  createCheckout(request: CheckoutRequest): Promise<CheckoutSession>;
  /** True only when the callback carries this provider's valid, fresh signature over exactly these bytes. */
  verifyCallback(callback: ProviderCallback): boolean;
  /** Reads a verified callback's body. Throws InvalidProviderEvent when it is not an event of this provider. */
  parseEvent(rawBody: Buffer): ProviderEvent;
}

export class InvalidProviderEvent extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidProviderEvent';
  }
}
