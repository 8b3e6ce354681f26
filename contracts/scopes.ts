/**
 * Every scope a key can hold (docs/api-conventions.md, "Authentication, scopes, rate limits"). A key created by
 * `create-org` holds all of them.
 */
export const SCOPES = [
  'api:discovery',
  'customers:read',
  'customers:write',
  'products:read',
  'products:write',
  'invoices:read',
  'invoices:write',
  'payments:read',
  'payments:write',
  'reminders:read',
  'reminders:write',
  'subscriptions:read',
  'subscriptions:write',
  'cases:read',
  'cases:write',
  'terms:accept',
  'events:read',
  'webhooks:manage',
  'settlements:read',
  'settings:read',
  'settings:write',
  'members:read',
  'members:manage',
] as const;

export type Scope = (typeof SCOPES)[number];

export const isScope = (s: string): s is Scope => (SCOPES as readonly string[]).includes(s);
