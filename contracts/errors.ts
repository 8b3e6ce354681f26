/**
 * The error catalogue: every code the API can answer with, and its HTTP status.
 * Codes are stable; integrators branch on them. Messages are for humans and may change.
 */
export const ErrorStatus = {
  invalid_json: 400,
  validation_failed: 400,
  idempotency_key_missing: 400,
  idempotency_key_invalid: 400,
  invalid_cursor: 400,
  invalid_request: 400,
  /** POST /v1/bank-statements: not a camt.053 document (malformed XML, another message, or unreadable); `details` says why and where. */
  invalid_statement: 400,
  unauthenticated: 401,
  insufficient_scope: 403,
  plan_required: 403,
  sandbox_only: 403,
  route_not_found: 404,
  customer_not_found: 404,
  department_not_found: 404,
  product_not_found: 404,
  account_not_found: 404,
  invoice_not_found: 404,
  credit_note_not_found: 404,
  payment_not_found: 404,
  receipt_not_ready: 404,
  webhook_endpoint_not_found: 404,
  subscription_not_found: 404,
  reminder_flow_not_found: 404,
  case_not_found: 404,
  member_not_found: 404,
  bank_statement_not_found: 404,
  bank_statement_entry_not_found: 404,
  /** GET …/payment-plan: the invoice never had a payment plan. */
  payment_plan_not_found: 404,
  idempotency_conflict: 409,
  idempotency_in_progress: 409,
  sku_already_exists: 409,
  account_number_already_exists: 409,
  /** POST /v1/betingelse-accept: the idempotensnoegle is recorded with other content (the evidence never changes). */
  evidence_conflict: 409,
  case_conflict: 409,
  /** POST …/payment-plan while the invoice's plan is active (one at a time). */
  payment_plan_exists: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  headers_too_large: 431,
  vat_exemption_reason_required: 422,
  vat_exemption_reason_not_allowed: 422,
  invalid_vat_rate: 422,
  invalid_discount: 422,
  amount_out_of_range: 422,
  invoice_not_editable: 422,
  invalid_due_date: 422,
  invoice_not_issued: 422,
  invoice_not_due: 422,
  invoice_not_creditable: 422,
  customer_email_missing: 422,
  customer_address_missing: 422,
  reminder_not_eligible: 422,
  reminder_limit_reached: 422,
  credit_note_not_sendable: 422,
  /** Never an API answer: the print-and-post provider refused a letter for good (a workflow step's terminal error). */
  letter_rejected: 422,
  /** Never an API answer: the collection partner refused a hand-over for good (a workflow step's terminal error). */
  collection_partner_rejected: 422,
  webhook_url_rejected: 422,
  webhook_endpoint_limit: 422,
  replay_window_exceeded: 422,
  test_clock_backwards: 422,
  credit_note_not_payable: 422,
  payment_date_in_future: 422,
  seller_details_incomplete: 422,
  /** Issuing for a customer with an e-invoice address needs buyerReference or orderReference (Peppol R003). */
  buyer_reference_required: 422,
  /** GET …/einvoice: the issued snapshot lacks what the profile needs; `details` names each missing item. */
  einvoice_not_possible: 422,
  /** The e-invoice access point refused a document for good (a send's failure code, never an API answer). */
  einvoice_rejected: 422,
  invalid_reminder_settings: 422,
  claim_time_barred: 422,
  /** POST …/collect: nothing is left to pay. */
  invoice_already_paid: 422,
  /** POST …/collect: the principal is paid; reminder fees alone are never collected. */
  only_fees_outstanding: 422,
  /** POST …/collect: the plan's reminders are not all taken yet. */
  reminder_flow_incomplete: 422,
  /** POST /v1/reminder-flows: the graph breaks the format's rules; `details` has one entry per problem. */
  invalid_flow_graph: 422,
  /** POST …/approve by the key that created the version (four-eyes). */
  approver_is_creator: 422,
  /** A subscription's status does not allow the call (pause, resume, cancel, a change of a cancelled one); the message names the status. */
  invalid_transition: 422,
  /** A subscription's endDate before its startDate. */
  invalid_end_date: 422,
  /** PATCH of a subscription's customerId or startDate after a period was invoiced. */
  subscription_already_invoiced: 422,
  /** POST …/run: no period is due yet (its start is after the business today), or the due ones were run meanwhile. */
  subscription_not_due: 422,
  /** POST …/run: another run held the subscription's lease for longer than the 10 s a run waits for it. */
  subscription_run_in_progress: 409,
  /** PATCH /v1/members/{userId}: a role that is not in GET /v1/roles. */
  unknown_role: 422,
  /** PATCH /v1/members/{userId}: the organisation's last admin cannot lose the admin role. */
  last_admin: 422,
  /**
   * PUT /v1/payment-domain, PATCH /v1/customer-portal: the domain is not a DNS host name with at least one dot, is in
   * an internal-only zone, is a host of the service itself or is under PORTAL_BASE_DOMAIN.
   */
  invalid_domain: 422,
  /** POST /v1/payment-domain/verify with no payment domain set. */
  payment_domain_missing: 422,
  /** PATCH /v1/customer-portal: another organisation's portal has the subdomain. */
  subdomain_taken: 409,
  /** PATCH /v1/customer-portal: the subdomain is reserved for the service's own hosts (www, api, pay, login, …). */
  subdomain_reserved: 422,
  /** PUT /v1/payment-domain, PATCH /v1/customer-portal: the name is a portal custom domain / payment domain (of any organisation). */
  domain_in_use: 409,
  /** PATCH /v1/customer-portal: `active: true` while the portal has no subdomain. */
  portal_subdomain_required: 422,
  /** POST /v1/customer-portal/verify-domain with no custom domain set. */
  portal_custom_domain_missing: 422,
  /** PUT /v1/branding/logo: the data is not a valid image of its `mime`, or exceeds 512 KiB or 4000 × 4000 pixels. */
  logo_invalid: 422,
  /** POST /v1/bank-statement-entries/{entryId}/match: the entry is matched, a duplicate or ignored already. */
  entry_not_unmatched: 422,
  /** POST …/payment-plan on an invoice handed over to debt collection. */
  invoice_in_collections: 422,
  /** POST …/payment-plan: the instalments do not add up to the balance; `details[0].expectedOere` is what they must. */
  installments_total_mismatch: 422,
  /** POST …/collect or POST …/reminders while the invoice's payment plan is active. */
  payment_plan_active: 422,
  rate_limited: 429,
  internal_error: 500,
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ErrorStatus;
