import type { CustomerCreate } from '../../contracts/customers.ts';
import type { Keyring } from '../shared/crypto.ts';
import type { MutationUseCase } from '../idempotency/run-mutation.ts';
import { startCreateCustomer } from './create-customer.ts';

/**
 * POST /v1/customers (the route, and the batch's customer.create): the customer is answered at once, its INSERT
 * travelling with the stored response and the COMMIT (startCreateCustomer).
 */
export function addCustomer(keyring: Keyring, organizationId: string, input: CustomerCreate): MutationUseCase {
  return async (tx, request) => {
    const { customer, written } = startCreateCustomer(tx, keyring, organizationId, input, request.now);
    return { status: 201, data: customer, location: `/v1/customers/${customer.id}`, pending: written };
  };
}
