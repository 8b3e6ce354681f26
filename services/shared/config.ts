/**
 * Every setting the service reads, in one place. Each is documented in README.md ("Configuration").
 * Nothing else in the code base reads process.env.
 */
export interface Config {
  nodeEnv: string;
  port: number;
  host: string;
  databaseUrl: string | undefined;
  dbPoolMax: number;
  dataDir: string;
  encryptionKey: string | undefined;
  restateIngressUrl: string | undefined;
  restateAdminUrl: string | undefined;
  workflowsPort: number;
  /** Interface the workflows endpoint listens on. */
  workflowsHost: string;
  /** The endpoint's address as restate-server reaches it; derived from host and port when unset. */
  workflowsUrl: string | undefined;
  /** Stored idempotent responses are purged after this many days (decisions.md: at least 30). */
  idempotencyRetentionDays: number;
  rateLimitDefault: number;
  rateLimitDocument: number;
  logLevel: string;
  /** The API's public address, put into mails (tracking pixel); unset: no pixel. */
  publicApiUrl: string | undefined;
  authCacheTtlMs: number;
  /** smtp:// or smtps:// relay, credentials in the URL; unset keeps mail as .eml files under DATA_DIR/mail. */
  smtpUrl: string | undefined;
  /** Envelope sender and From address of every mail; the organisation's name is its display name. */
  mailFromAddress: string;
}

const int = (name: string, raw: string | undefined, dflt: number): number => {
  if (raw === undefined || raw === '') return dflt;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  return n;
};

// The contract promises a minimum (e.g. 30 days of idempotent replays); a smaller setting would silently break it.
const atLeast = (name: string, n: number, min: number): number => {
  if (n < min) throw new Error(`${name} must be at least ${min}, got ${n}`);
  return n;
};

// A bad relay address would otherwise surface only at the first send, as a retried "transient" failure.
const smtpUrl = (raw: string | undefined): string | undefined => {
  if (!raw) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error('SMTP_URL is not a URL');
  }
  if ((url.protocol !== 'smtp:' && url.protocol !== 'smtps:') || !url.hostname) throw new Error('SMTP_URL must be smtp://host[:port] or smtps://host[:port]');
  return raw;
};

const mailAddress = (name: string, raw: string): string => {
  if (!/^[^\s@<>"]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$/.test(raw)) throw new Error(`${name} must be a plain address like no-reply@example.dk, got "${raw}"`);
  return raw;
};

export function readConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return {
    nodeEnv: env.NODE_ENV ?? 'development',
    port: int('PORT', env.PORT, 3000),
    host: env.HOST ?? '127.0.0.1',
    databaseUrl: env.DATABASE_URL || undefined,
    dbPoolMax: int('DB_POOL_MAX', env.DB_POOL_MAX, 10),
    dataDir: env.DATA_DIR || '.data',
    encryptionKey: env.DATA_ENCRYPTION_KEY || undefined,
    restateIngressUrl: env.RESTATE_INGRESS_URL || undefined,
    restateAdminUrl: env.RESTATE_ADMIN_URL || undefined,
    workflowsPort: int('WORKFLOWS_PORT', env.WORKFLOWS_PORT, 0),
    workflowsHost: env.WORKFLOWS_HOST || '127.0.0.1',
    workflowsUrl: env.WORKFLOWS_URL || undefined,
    idempotencyRetentionDays: atLeast('IDEMPOTENCY_RETENTION_DAYS', int('IDEMPOTENCY_RETENTION_DAYS', env.IDEMPOTENCY_RETENTION_DAYS, 30), 30),
    rateLimitDefault: int('RATE_LIMIT_DEFAULT', env.RATE_LIMIT_DEFAULT, 100),
    rateLimitDocument: int('RATE_LIMIT_DOCUMENT', env.RATE_LIMIT_DOCUMENT, 10),
    logLevel: env.LOG_LEVEL ?? 'info',
    publicApiUrl: env.PUBLIC_API_URL || undefined,
    authCacheTtlMs: int('AUTH_CACHE_TTL_MS', env.AUTH_CACHE_TTL_MS, 30_000),
    smtpUrl: smtpUrl(env.SMTP_URL),
    mailFromAddress: mailAddress('MAIL_FROM_ADDRESS', env.MAIL_FROM_ADDRESS || 'no-reply@faktura.invalid'),
  };
}
