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
  idempotency_conflict: 409,
  idempotency_in_progress: 409,
  sku_already_exists: 409,
  account_number_already_exists: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  headers_too_large: 431,
  vat_exemption_reason_required: 422,
  vat_exemption_reason_not_allowed: 422,
  rate_limited: 429,
  internal_error: 500,
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ErrorStatus;
