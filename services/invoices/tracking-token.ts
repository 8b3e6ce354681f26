import type { Keyring } from '../shared/crypto.ts';
import { safeEqual } from '../shared/crypto.ts';
import { isUuid } from '../shared/ids.ts';

/**
 * The token in an invoice mail's tracking pixel: organisation and invoice ids with a MAC, so only a pixel we put in a
 * mail can mark an invoice as opened, and nothing about the customer is in the URL.
 */
export function trackingToken(keyring: Keyring, organizationId: string, invoiceId: string): string {
  const mac = keyring.mac(`open-pixel\n${organizationId}\n${invoiceId}`).subarray(0, 16).toString('base64url');
  return `${organizationId}.${invoiceId}.${mac}`;
}

export function readTrackingToken(keyring: Keyring, token: string): { organizationId: string; invoiceId: string } | undefined {
  const [organizationId, invoiceId, mac] = token.split('.');
  if (!organizationId || !invoiceId || !mac || !isUuid(organizationId) || !isUuid(invoiceId)) return undefined;
  const expected = keyring.mac(`open-pixel\n${organizationId}\n${invoiceId}`).subarray(0, 16);
  return safeEqual(Buffer.from(mac, 'base64url'), expected) ? { organizationId, invoiceId } : undefined;
}
