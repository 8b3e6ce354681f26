import { DOMAIN_STATUSES, DOMAIN_TRANSITIONS } from '../domains/payment-domain-lifecycle.ts';
import { defineLifecycle } from '../shared/lifecycle.ts';

/**
 * The verification of the customer portal's custom domain (customer_portals.custom_domain_status): the same states
 * and transitions as the payment domain's (payment-domain-lifecycle.ts), on the portal's row.
 */
export const CUSTOM_DOMAIN_LIFECYCLE = defineLifecycle({
  name: 'portal custom domain',
  table: 'customer_portals',
  column: 'custom_domain_status',
  stateNoun: 'status',
  tenantColumn: null,
  idColumn: 'organization_id',
  states: DOMAIN_STATUSES,
  transitions: DOMAIN_TRANSITIONS,
});
