import { IDENTITY_KEY_PATTERN } from './request-identity.ts';

/**
 * Every setting the service reads, in one place. Each is documented in docs/operations.md ("Configuration").
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
  /**
   * RESTATE_IDENTITY_KEYS: the `publickeyv1_…` keys whose signature the workflows endpoint requires on every request
   * (restate-server signs with the private key; docs/operations.md, "Request identity"). Empty: unsigned requests are
   * accepted (the SDK warns at start); the workflows process refuses to start so with NODE_ENV=production.
   */
  restateIdentityKeys: string[];
  /**
   * Stored idempotent responses are purged after this many days (docs/api-conventions.md, "Idempotency": at least 30).
   */
  idempotencyRetentionDays: number;
  rateLimitDefault: number;
  rateLimitDocument: number;
  logLevel: string;
  /** The API's public address, put into mails (tracking pixel); unset: no pixel. */
  publicApiUrl: string | undefined;
  authCacheTtlMs: number;
  /**
   * REDIS_URL: redis:// or rediss:// server holding the rate-limit and look-up-limit buckets of every replica
   * (docs/operations.md, "Shared limits"); unset, each process counts on its own. `npm start` runs its own when unset.
   */
  redisUrl: string | undefined;
  /** smtp:// or smtps:// relay, credentials in the URL; unset keeps mail as .eml files under DATA_DIR/mail. */
  smtpUrl: string | undefined;
  /** Envelope sender and From address of every mail; the organisation's name is its display name. */
  mailFromAddress: string;
  /** PAY_PORT: where the pay service listens; unset: 3001 standalone, a free port kept across starts under `npm start`. */
  payPort: number | undefined;
  payHost: string;
  /** PAY_BASE_URL: the pay page's public address, the base of every payment link; see payBaseUrl(). */
  payBaseUrl: string | undefined;
  /** PAY_TRUST_PROXY: take the client address from X-Forwarded-For (set behind a reverse proxy), for the code look-up limit. */
  payTrustProxy: boolean;
  /**
   * WEBHOOK_ALLOW_LOOPBACK: webhook receivers on loopback (also over plain http://) are allowed, for local development
   * and tests only. Every other private or internal destination stays refused. Refused with NODE_ENV=production.
   */
  webhookAllowLoopback: boolean;
  /** LETTER_API_URL: the print-and-post provider's HTTP API; unset keeps letters as files under DATA_DIR/letters. */
  letterApiUrl: string | undefined;
  /** LETTER_API_KEY: the provider's bearer token (a secret: never logged); required with LETTER_API_URL. */
  letterApiKey: string | undefined;
  /** EINVOICE_AP_URL: the e-invoice access-point provider's HTTP API; unset keeps e-invoices as files under DATA_DIR/einvoices. */
  einvoiceApUrl: string | undefined;
  /** EINVOICE_AP_KEY: the access point's bearer token (a secret: never logged); required with EINVOICE_AP_URL. */
  einvoiceApKey: string | undefined;
  /**
   * COLLECTION_PARTNER_URL: where a collection case is handed over (a signed JSON POST per case); unset keeps each
   * hand-over as a JSON file under DATA_DIR/collections.
   */
  collectionPartnerUrl: string | undefined;
  /** COLLECTION_PARTNER_SECRET: the Standard Webhooks secret (`whsec_…`) the hand-over is signed with; a secret, never logged. */
  collectionPartnerSecret: string | undefined;
  /**
   * DNS_SERVERS: comma-separated `host` or `host:port` resolvers used for the payment-domain TXT check and the portal's
   * custom-domain CNAME check (node:dns Resolver); unset: the system's resolvers.
   */
  dnsServers: string[] | undefined;
  /** PORTAL_CNAME_TARGET: the host name a portal custom domain must be a CNAME to (POST /v1/customer-portal/verify-domain). */
  portalCnameTarget: string;
  /**
   * PORTAL_BASE_DOMAIN: the portal is served at `<subdomain>.<PORTAL_BASE_DOMAIN>`; unset, it is served locally at
   * `<PAY_BASE_URL>/portal/<subdomain>`.
   */
  portalBaseDomain: string | undefined;
  /** METRICS_HOST: the interface every process's Prometheus listener (`GET /metrics`) binds to; never a public port. */
  metricsHost: string;
  /**
   * METRICS_PORT: the API process's metrics port; the pay process listens on it + 1, the workflows process on it + 2
   * (`metricsPort`). Unset: 9464 standalone; under `npm start` 9464 when free, else a free port kept across starts.
   * 0: each process listens on a free port of its own and logs it.
   */
  metricsPort: number | undefined;
  /**
   * OTEL_EXPORTER_OTLP_ENDPOINT: the OTLP/HTTP receiver traces go to (`/v1/traces` is appended, as the OpenTelemetry
   * specification says for this variable); unset, nothing is traced or exported (docs/operations.md, "Traces and logs").
   */
  otlpEndpoint: string | undefined;
  /** OTEL_EXPORTER_OTLP_PROTOCOL: `http/protobuf` (default) or `http/json`; gRPC is not spoken. */
  otlpProtocol: OtlpProtocol;
  /** OTEL_SERVICE_NAME: the resource's service.name instead of faktura-api, faktura-pay or faktura-workflows. */
  otelServiceName: string | undefined;
  /** DOCUMENT_STORE: where issued documents are kept, `postgres` (the `documents` table) or `s3` (docs/operations.md, "Document archive"). */
  documentStore: 'postgres' | 's3';
  /** S3_ENDPOINT: the S3 server's address (path-style requests); unset: AWS's own endpoint for the region. */
  s3Endpoint: string | undefined;
  /** S3_BUCKET: the archive bucket, created with Object Lock enabled; required with DOCUMENT_STORE=s3. */
  s3Bucket: string | undefined;
  /** S3_REGION: the bucket's region. */
  s3Region: string;
}

export type OtlpProtocol = 'http/protobuf' | 'http/json';

const int = (name: string, raw: string | undefined, dflt: number): number => {
  if (raw === undefined || raw === '') return dflt;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  return n;
};

// The API promises a minimum (30 days of idempotent replays, docs/api-conventions.md "Idempotency"); a smaller
// setting would silently break it.
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

// A typo would otherwise only show as a limiter that silently counts per process.
const redisUrl = (raw: string | undefined): string | undefined => {
  if (!raw) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error('REDIS_URL is not a URL');
  }
  if ((url.protocol !== 'redis:' && url.protocol !== 'rediss:') || !url.hostname) throw new Error('REDIS_URL must be redis://host[:port][/db] or rediss://host[:port][/db]');
  return raw;
};

const bool = (name: string, raw: string | undefined): boolean => {
  if (raw === undefined || raw === '' || raw === 'false') return false;
  if (raw === 'true') return true;
  throw new Error(`${name} must be true or false, got "${raw}"`);
};

// Loopback receivers are a development convenience; in production they would let a tenant reach the host itself.
const allowLoopback = (env: NodeJS.ProcessEnv): boolean => {
  const on = bool('WEBHOOK_ALLOW_LOOPBACK', env.WEBHOOK_ALLOW_LOOPBACK);
  if (on && env.NODE_ENV === 'production') throw new Error('WEBHOOK_ALLOW_LOOPBACK=true is not allowed with NODE_ENV=production');
  return on;
};

const mailAddress = (name: string, raw: string): string => {
  if (!/^[^\s@<>"]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$/.test(raw)) throw new Error(`${name} must be a plain address like no-reply@example.dk, got "${raw}"`);
  return raw;
};

/** The API process's metrics port when METRICS_PORT is unset (Prometheus' range for exporters). */
export const DEFAULT_METRICS_PORT = 9464;

/** Each process's offset from METRICS_PORT: one base port names the three listeners of one replica set. */
export const METRICS_PORT_OFFSET = { api: 0, pay: 1, workflows: 2 } as const;

/** Where `process` serves its metrics: METRICS_PORT (or 9464) plus its offset; 0 stays 0 (a free port). */
export function metricsPort(config: Pick<Config, 'metricsPort'>, process: keyof typeof METRICS_PORT_OFFSET): number {
  const base = config.metricsPort ?? DEFAULT_METRICS_PORT;
  return base === 0 ? 0 : base + METRICS_PORT_OFFSET[process];
}

// The workflows process listens two above METRICS_PORT: the base must leave room for it.
const port = (name: string, raw: string, dflt: number): number => {
  const n = int(name, raw, dflt);
  if (n > 65_533) throw new Error(`${name} must be at most 65533 (the workflows process listens on it + 2), got ${n}`);
  return n;
};

/** The pay service's port when PAY_PORT is unset and nothing chose another one. */
export const DEFAULT_PAY_PORT = 3001;

/** PAY_BASE_URL, else the pay service's own loopback address: the base of every payment link's `url`. */
export function payBaseUrl(config: Pick<Config, 'payBaseUrl' | 'payHost' | 'payPort'>): string {
  if (config.payBaseUrl) return config.payBaseUrl.replace(/\/+$/, '');
  const host = callableHost(config.payHost);
  return `http://${host}:${config.payPort ?? DEFAULT_PAY_PORT}`;
}

// Payment links carry this address to customers: a typo would only show when someone tries to pay.
const httpUrl = (name: string, raw: string | undefined): string | undefined => {
  if (!raw) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`${name} is not a URL`);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.search || url.hash) throw new Error(`${name} must be an http(s) URL without query or fragment`);
  return raw.replace(/\/+$/, '');
};

// An access point without its key would refuse every e-invoice; said at start, like the letter service's.
const einvoiceAp = (env: NodeJS.ProcessEnv): Pick<Config, 'einvoiceApUrl' | 'einvoiceApKey'> => {
  const einvoiceApUrl = httpUrl('EINVOICE_AP_URL', env.EINVOICE_AP_URL);
  const einvoiceApKey = env.EINVOICE_AP_KEY || undefined;
  if (einvoiceApUrl && !einvoiceApKey) throw new Error('EINVOICE_AP_KEY must be set with EINVOICE_AP_URL');
  return { einvoiceApUrl, einvoiceApKey };
};

// A letter service without its key would refuse every letter; say so at start, without echoing the key.
const letterApi = (env: NodeJS.ProcessEnv): Pick<Config, 'letterApiUrl' | 'letterApiKey'> => {
  const letterApiUrl = httpUrl('LETTER_API_URL', env.LETTER_API_URL);
  const letterApiKey = env.LETTER_API_KEY || undefined;
  if (letterApiUrl && !letterApiKey) throw new Error('LETTER_API_KEY must be set with LETTER_API_URL');
  return { letterApiUrl, letterApiKey };
};

// A hand-over that cannot be signed would fail only on the first case's hand-over day; say so at start, never echoing the secret.
const collectionPartner = (env: NodeJS.ProcessEnv): Pick<Config, 'collectionPartnerUrl' | 'collectionPartnerSecret'> => {
  const collectionPartnerUrl = httpUrl('COLLECTION_PARTNER_URL', env.COLLECTION_PARTNER_URL);
  const collectionPartnerSecret = env.COLLECTION_PARTNER_SECRET || undefined;
  if (collectionPartnerUrl && !collectionPartnerSecret) throw new Error('COLLECTION_PARTNER_SECRET must be set with COLLECTION_PARTNER_URL');
  if (collectionPartnerSecret !== undefined) {
    const key = collectionPartnerSecret.startsWith('whsec_') ? collectionPartnerSecret.slice('whsec_'.length) : '';
    const bytes = /^[A-Za-z0-9+/]+={0,2}$/.test(key) ? Buffer.from(key, 'base64').length : 0;
    if (bytes < 24 || bytes > 64) throw new Error('COLLECTION_PARTNER_SECRET must be whsec_ followed by base64 of 24 to 64 random bytes');
  }
  return { collectionPartnerUrl, collectionPartnerSecret };
};

// An archive without its bucket would fail only at the first issued invoice; say so at start.
const documentStore = (env: NodeJS.ProcessEnv): Pick<Config, 'documentStore' | 's3Endpoint' | 's3Bucket' | 's3Region'> => {
  const store = env.DOCUMENT_STORE || 'postgres';
  if (store !== 'postgres' && store !== 's3') throw new Error(`DOCUMENT_STORE must be postgres or s3, got "${store}"`);
  const s3Bucket = env.S3_BUCKET || undefined;
  if (store === 's3' && !s3Bucket) throw new Error('S3_BUCKET must be set with DOCUMENT_STORE=s3');
  return { documentStore: store, s3Endpoint: httpUrl('S3_ENDPOINT', env.S3_ENDPOINT), s3Bucket, s3Region: env.S3_REGION || 'us-east-1' };
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
    restateIdentityKeys: identityKeys(env.RESTATE_IDENTITY_KEYS),
    idempotencyRetentionDays: atLeast('IDEMPOTENCY_RETENTION_DAYS', int('IDEMPOTENCY_RETENTION_DAYS', env.IDEMPOTENCY_RETENTION_DAYS, 30), 30),
    rateLimitDefault: int('RATE_LIMIT_DEFAULT', env.RATE_LIMIT_DEFAULT, 100),
    rateLimitDocument: int('RATE_LIMIT_DOCUMENT', env.RATE_LIMIT_DOCUMENT, 10),
    logLevel: env.LOG_LEVEL ?? 'info',
    publicApiUrl: env.PUBLIC_API_URL || undefined,
    authCacheTtlMs: int('AUTH_CACHE_TTL_MS', env.AUTH_CACHE_TTL_MS, 30_000),
    redisUrl: redisUrl(env.REDIS_URL),
    smtpUrl: smtpUrl(env.SMTP_URL),
    mailFromAddress: mailAddress('MAIL_FROM_ADDRESS', env.MAIL_FROM_ADDRESS || 'no-reply@faktura.invalid'),
    payPort: env.PAY_PORT ? int('PAY_PORT', env.PAY_PORT, DEFAULT_PAY_PORT) : undefined,
    payHost: env.PAY_HOST || '127.0.0.1',
    payBaseUrl: httpUrl('PAY_BASE_URL', env.PAY_BASE_URL),
    payTrustProxy: bool('PAY_TRUST_PROXY', env.PAY_TRUST_PROXY),
    webhookAllowLoopback: allowLoopback(env),
    ...letterApi(env),
    ...einvoiceAp(env),
    ...collectionPartner(env),
    dnsServers: dnsServers(env.DNS_SERVERS),
    portalCnameTarget: hostName('PORTAL_CNAME_TARGET', env.PORTAL_CNAME_TARGET) ?? 'portal.faktura.invalid',
    portalBaseDomain: hostName('PORTAL_BASE_DOMAIN', env.PORTAL_BASE_DOMAIN),
    metricsHost: env.METRICS_HOST || '127.0.0.1',
    metricsPort: env.METRICS_PORT ? port('METRICS_PORT', env.METRICS_PORT, DEFAULT_METRICS_PORT) : undefined,
    otlpEndpoint: httpEndpoint('OTEL_EXPORTER_OTLP_ENDPOINT', env.OTEL_EXPORTER_OTLP_ENDPOINT),
    otlpProtocol: otlpProtocol(env.OTEL_EXPORTER_OTLP_PROTOCOL),
    otelServiceName: env.OTEL_SERVICE_NAME || undefined,
    ...documentStore(env),
  };
}

/** RESTATE_IDENTITY_KEYS: comma-separated `publickeyv1_…` keys; a typo would otherwise refuse every request from Restate. */
function identityKeys(raw: string | undefined): string[] {
  if (!raw) return [];
  const keys = raw.split(',').map((s) => s.trim()).filter(Boolean);
  for (const key of keys) {
    if (!IDENTITY_KEY_PATTERN.test(key)) throw new Error(`RESTATE_IDENTITY_KEYS must be comma-separated publickeyv1_… keys, got "${key.slice(0, 24)}…"`);
  }
  return keys;
}

// A typo in the collector's address would otherwise only show as traces that never arrive.
function httpEndpoint(name: string, raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`${name} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`${name} must be an http(s) URL, got "${raw}"`);
  return raw.replace(/\/+$/, '');
}

// The exporters speak OTLP over HTTP only; `grpc` (the specification's other value) is refused rather than ignored.
function otlpProtocol(raw: string | undefined): OtlpProtocol {
  if (raw === undefined || raw === '' || raw === 'http/protobuf') return 'http/protobuf';
  if (raw === 'http/json') return 'http/json';
  throw new Error(`OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf or http/json, got "${raw}"`);
}

/** A DNS host name with at least one dot, lower-cased; unset or empty: undefined. */
function hostName(name: string, raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  const v = raw.trim().toLowerCase().replace(/\.$/, '');
  if (!/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$/.test(v)) {
    throw new Error(`${name} must be a DNS host name with at least one dot, got "${raw}"`);
  }
  return v;
}

/** DNS_SERVERS: `host` or `host:port` items (IPv6 as `[addr]:port`), as node:dns Resolver.setServers takes them. */
function dnsServers(raw: string | undefined): string[] | undefined {
  if (!raw) return undefined;
  const items = raw.split(',').map((s) => s.trim()).filter(Boolean);
  if (items.length === 0) return undefined;
  for (const item of items) {
    if (!/^(\d{1,3}(\.\d{1,3}){3}(:\d{1,5})?|\[[0-9a-fA-F:]+\](:\d{1,5})?|[0-9a-fA-F:]+)$/.test(item)) {
      throw new Error(`DNS_SERVERS must be comma-separated IP addresses with optional ports, got "${item}"`);
    }
  }
  return items;
}

/** A listening host as a URL host a local client can call: the wildcards become loopback, IPv6 gets its brackets. */
export function callableHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}
