import { isScope, SCOPES, type Scope } from '../../contracts/scopes.ts';
import type { Db, Queryable } from '../../services/shared/db.ts';
import { isUuid } from '../../services/shared/ids.ts';
import { createApiKey } from '../organizations/create-api-key.ts';
import { createOrganization } from '../organizations/create-organization.ts';
import { listApiKeys, type ApiKeySummary } from '../organizations/list-api-keys.ts';
import type { SellerDetails } from '../organizations/organization-fields.ts';
import { revokeApiKey } from '../organizations/revoke-api-key.ts';
import { DEFAULT_PLAN, isPlan, PLANS, type Plan } from '../organizations/plans.ts';
import { updateOrganization, type UpdateOrganizationInput } from '../organizations/update-organization.ts';
import { parkedWorkCommand, retryWorkCommand } from './work-commands.ts';
import { withdrawCaseCommand } from './case-commands.ts';
import { addMemberCommand } from './member-commands.ts';
import { setReferenceRateCommand } from './rate-commands.ts';
import { FI_CREDITOR_NUMBER } from '../payments/fik-payment-id.ts';

/**
 * The operator command's sub-commands. Each validates its flags before the database is opened, so a wrong command
 * line fails fast (exit 2) on any machine, and only a well-formed command touches the database.
 */

/** The command line is wrong: exit 2, with the usage. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** The command is well-formed but cannot be carried out, e.g. the organisation does not exist: exit 1. */
export class OperatorError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OperatorError';
  }
}

export type FlagKind = 'string' | 'boolean';
/** Parsed flags by name without the dashes: the value of a string flag, `true` for a boolean flag that is present. */
export type Flags = ReadonlyMap<string, string | true>;

export interface Output {
  /** Printed as exactly one line with --json. */
  json: Record<string, unknown>;
  text: string;
}

export interface Command {
  summary: string;
  /** The flags after the command name, as the usage shows them. */
  synopsis: string;
  flags: Record<string, FlagKind>;
  /** Validates the flags (throwing UsageError) and returns the work to run once the database is open. */
  prepare(flags: Flags): (db: Db) => Promise<Output>;
}

interface TextRule {
  max: number;
  pattern?: RegExp;
  describe: string;
}

// Bounds follow the API's own address and e-mail fields; bank details are Danish: a 4-digit registration number
// and an account number of at most 10 digits, as printed on the payment slip of an invoice.
const RULES: Record<string, TextRule> = {
  name: { max: 200, describe: '1 to 200 characters' },
  cvr: { max: 8, pattern: /^[0-9]{8}$/, describe: 'exactly 8 digits' },
  street: { max: 200, describe: '1 to 200 characters' },
  'postal-code': { max: 10, describe: '1 to 10 characters' },
  city: { max: 100, describe: '1 to 100 characters' },
  email: { max: 254, pattern: /^[^\s@]+@[^\s@]+\.[^\s@]+$/, describe: 'an e-mail address of at most 254 characters' },
  'bank-reg': { max: 4, pattern: /^[0-9]{4}$/, describe: 'a registration number of exactly 4 digits' },
  'bank-account': { max: 10, pattern: /^[0-9]{1,10}$/, describe: 'an account number of 1 to 10 digits' },
  'fi-creditor': { max: 8, pattern: FI_CREDITOR_NUMBER, describe: 'an FI creditor number: 8 digits, the first an 8' },
};

const SELLER_FLAGS: Record<string, keyof SellerDetails> = {
  street: 'street',
  'postal-code': 'postalCode',
  city: 'city',
  email: 'email',
  'bank-reg': 'bankReg',
  'bank-account': 'bankAccount',
  'fi-creditor': 'fiCreditorNumber',
};

const ORG_FLAGS: Record<string, FlagKind> = {
  name: 'string',
  cvr: 'string',
  ...Object.fromEntries(Object.keys(SELLER_FLAGS).map((f) => [f, 'string' as const])),
};

const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;

/** A text flag, trimmed (stray spaces from shell quoting never reach a printed invoice) and checked. */
function textFlag(flags: Flags, name: string): string | undefined {
  const raw = flags.get(name);
  if (raw === undefined) return undefined;
  const rule = RULES[name]!;
  const value = String(raw).trim();
  const length = [...value].length;
  if (length === 0 || length > rule.max || CONTROL_CHARS.test(value) || (rule.pattern && !rule.pattern.test(value))) {
    throw new UsageError(`--${name} must be ${rule.describe}, got "${String(raw)}"`);
  }
  return value;
}

/** The `pastDue` thresholds of the customer balance: whole numbers within these bounds. */
const INTEGER_RULES: Record<string, { min: number; max: number; describe: string }> = {
  'past-due-min-oere': { min: 0, max: 100_000_000_000, describe: 'a whole number of øre from 0 to 100000000000' },
  'past-due-min-days': { min: 0, max: 3650, describe: 'a whole number of days from 0 to 3650' },
};

function integerFlag(flags: Flags, name: string): number | undefined {
  const raw = flags.get(name);
  if (raw === undefined) return undefined;
  const rule = INTEGER_RULES[name]!;
  const value = String(raw).trim();
  const n = Number(value);
  if (!/^[0-9]+$/.test(value) || n < rule.min || n > rule.max) throw new UsageError(`--${name} must be ${rule.describe}, got "${String(raw)}"`);
  return n;
}

/** `--plan standard|pro`: absent → undefined. */
function planFlag(flags: Flags): Plan | undefined {
  const raw = flags.get('plan');
  if (raw === undefined) return undefined;
  const value = String(raw).trim();
  if (!isPlan(value)) throw new UsageError(`--plan must be one of ${PLANS.join(', ')}, got "${String(raw)}"`);
  return value;
}

function idFlag(flags: Flags, name: string): string {
  const raw = flags.get(name);
  if (raw === undefined) throw new UsageError(`--${name} is required`);
  const value = String(raw).trim();
  if (!isUuid(value)) throw new UsageError(`--${name} must be a UUID, got "${value}"`);
  return value.toLowerCase();
}

function sellerDetails(flags: Flags): SellerDetails {
  const details: SellerDetails = {};
  for (const [flag, field] of Object.entries(SELLER_FLAGS)) {
    const value = textFlag(flags, flag);
    if (value !== undefined) details[field] = value;
  }
  return details;
}

/** `a,b,c` → those scopes in catalogue order; absent → every scope. Unknown names are a usage error. */
export function parseScopes(raw: string | undefined): Scope[] {
  if (raw === undefined) return [...SCOPES];
  const names = raw.split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (names.length === 0) throw new UsageError(`--scopes needs at least one scope; valid scopes: ${SCOPES.join(', ')}`);
  const unknown = names.filter((n) => !isScope(n));
  if (unknown.length > 0) {
    throw new UsageError(`unknown scope${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}; valid scopes: ${SCOPES.join(', ')}`);
  }
  return SCOPES.filter((s) => names.includes(s));
}

async function organizationSandbox(sql: Queryable, organizationId: string): Promise<boolean> {
  const [row] = await sql<{ sandbox: boolean }[]>`SELECT sandbox FROM organizations WHERE id = ${organizationId}`;
  if (!row) throw new OperatorError(`No organization with id ${organizationId} exists.`);
  return row.sandbox;
}

const describeScopes = (scopes: readonly string[]): string =>
  scopes.length === SCOPES.length ? `every scope (${SCOPES.length})` : scopes.join(', ');

const keyNotice = (apiKey: string): string =>
  `\n  ${apiKey}\n\nCopy the key now: only its hash is stored, and it will not be shown again.`;

const createOrg: Command = {
  summary: 'Create an organization and its first API key, which holds every scope unless --scopes limits it.',
  synopsis: '--name NAME [--cvr 8DIGITS] [--sandbox] [--scopes a,b,c] [--plan standard|pro] [seller details] [--json]',
  flags: { ...ORG_FLAGS, sandbox: 'boolean', scopes: 'string', plan: 'string' },
  prepare(flags) {
    const name = textFlag(flags, 'name');
    if (name === undefined) throw new UsageError('--name is required');
    const cvr = textFlag(flags, 'cvr');
    const sandbox = flags.has('sandbox');
    const scopes = parseScopes(flags.has('scopes') ? String(flags.get('scopes')) : undefined);
    const plan = planFlag(flags);
    const input = { name, sandbox, scopes, ...(cvr === undefined ? {} : { cvr }), ...(plan === undefined ? {} : { plan }), ...sellerDetails(flags) };
    return async (db) => {
      const org = await db.tx((tx) => createOrganization(tx, input));
      return {
        json: { organizationId: org.organizationId, keyId: org.keyId, apiKey: org.apiKey, scopes: org.scopes },
        text:
          `Created ${sandbox ? 'sandbox' : 'live'} organization ${org.organizationId} (${name}) on the ${plan ?? DEFAULT_PLAN} plan.\n` +
          `API key ${org.keyId} holds ${describeScopes(org.scopes)}:\n${keyNotice(org.apiKey)}`,
      };
    };
  },
};

const createKey: Command = {
  summary: "Create another API key for an organization; sk_test_ or sk_live_ follows the organization's sandbox flag.",
  synopsis: '--org ORG_ID [--scopes a,b,c] [--json]   (default: every scope)',
  flags: { org: 'string', scopes: 'string' },
  prepare(flags) {
    const organizationId = idFlag(flags, 'org');
    const scopes = parseScopes(flags.has('scopes') ? String(flags.get('scopes')) : undefined);
    return async (db) => {
      const key = await db.tx(async (tx) => createApiKey(tx, organizationId, await organizationSandbox(tx, organizationId), scopes));
      return {
        json: { keyId: key.keyId, apiKey: key.apiKey, scopes: key.scopes },
        text: `Created API key ${key.keyId} for organization ${organizationId}; it holds ${describeScopes(key.scopes)}:\n${keyNotice(key.apiKey)}`,
      };
    };
  },
};

const revokeKey: Command = {
  summary: 'Revoke an API key for good; running API processes refuse it at once.',
  synopsis: '--key KEY_ID [--json]',
  flags: { key: 'string' },
  prepare(flags) {
    const keyId = idFlag(flags, 'key');
    return async (db) => {
      const result = await db.tx((tx) => revokeApiKey(tx, keyId));
      if (!result) throw new OperatorError(`No API key with id ${keyId} exists.`);
      return {
        json: { keyId, revoked: true },
        text: result.alreadyRevoked ? `API key ${keyId} was already revoked.` : `Revoked API key ${keyId}.`,
      };
    };
  },
};

function keyLine(k: ApiKeySummary): string {
  const state = k.revokedAt === null ? 'active' : `revoked ${k.revokedAt}`;
  return `  ${k.keyId}  ${k.prefix}  created ${k.createdAt}  ${state}\n    scopes: ${describeScopes(k.scopes)}`;
}

const listKeys: Command = {
  summary: "List an organization's API keys (id, prefix, scopes, dates); never a key's secret.",
  synopsis: '--org ORG_ID [--json]',
  flags: { org: 'string' },
  prepare(flags) {
    const organizationId = idFlag(flags, 'org');
    return async (db) => {
      const keys = await db.read(async (sql) => {
        await organizationSandbox(sql, organizationId);
        return listApiKeys(sql, organizationId);
      });
      return {
        json: { keys },
        text:
          keys.length === 0
            ? `Organization ${organizationId} has no API keys.`
            : `API keys of organization ${organizationId}:\n${keys.map(keyLine).join('\n')}`,
      };
    };
  },
};

const UPDATE_ORG_FLAGS: Record<string, FlagKind> = { ...ORG_FLAGS, 'past-due-min-oere': 'string', 'past-due-min-days': 'string', plan: 'string' };

const updateOrg: Command = {
  summary: "Change an organization's name, CVR, seller details, past-due thresholds or plan.",
  synopsis: '--org ORG_ID [--name NAME] [--cvr 8DIGITS] [seller details] [--past-due-min-oere N] [--past-due-min-days N] [--plan standard|pro] [--json]',
  flags: { org: 'string', ...UPDATE_ORG_FLAGS },
  prepare(flags) {
    const organizationId = idFlag(flags, 'org');
    const input: UpdateOrganizationInput = { ...sellerDetails(flags) };
    const name = textFlag(flags, 'name');
    const cvr = textFlag(flags, 'cvr');
    const pastDueMinOere = integerFlag(flags, 'past-due-min-oere');
    const pastDueMinDays = integerFlag(flags, 'past-due-min-days');
    if (name !== undefined) input.name = name;
    if (cvr !== undefined) input.cvr = cvr;
    if (pastDueMinOere !== undefined) input.pastDueMinOere = pastDueMinOere;
    if (pastDueMinDays !== undefined) input.pastDueMinDays = pastDueMinDays;
    const plan = planFlag(flags);
    if (plan !== undefined) input.plan = plan;
    const changed = Object.keys(UPDATE_ORG_FLAGS).filter((f) => flags.has(f));
    if (changed.length === 0) {
      throw new UsageError(`update-org needs at least one of ${Object.keys(UPDATE_ORG_FLAGS).map((f) => `--${f}`).join(', ')}`);
    }
    return async (db) => {
      const found = await db.tx((tx) => updateOrganization(tx, organizationId, input));
      if (!found) throw new OperatorError(`No organization with id ${organizationId} exists.`);
      return {
        json: { organizationId, updated: true },
        text: `Updated organization ${organizationId}: ${changed.join(', ')}.`,
      };
    };
  },
};

/** In the order the usage lists them. */
export const COMMANDS: ReadonlyMap<string, Command> = new Map([
  ['create-org', createOrg],
  ['create-key', createKey],
  ['revoke-key', revokeKey],
  ['list-keys', listKeys],
  ['update-org', updateOrg],
  ['parked-work', parkedWorkCommand],
  ['retry-work', retryWorkCommand],
  ['withdraw-case', withdrawCaseCommand],
  ['add-member', addMemberCommand],
  ['set-reference-rate', setReferenceRateCommand],
]);

export const SELLER_DETAILS_USAGE =
  'Seller details (printed on documents): --street S --postal-code P --city C --email E --bank-reg NNNN --bank-account N --fi-creditor 8NNNNNNN';
