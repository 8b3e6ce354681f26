import { REDACTED } from './log-redaction.ts';

/**
 * An error as a log line shows it. Error messages are where request data slips into logs: PostgreSQL quotes the value
 * it could not read (`invalid input syntax for type uuid: "kunde@example.dk"`) and its `detail` the key it found
 * (`Key (email)=(…) already exists`), and any message built with a template string carries what it was given. So a
 * logged error keeps what identifies the fault, never the data it was about:
 *
 * - a PostgreSQL error: its class, SQLSTATE `code`, `severity`, `routine` and the names of the schema objects involved
 *   (table, column, constraint, type); not its message, detail, hint, where, query or parameters;
 * - any other error: its class, `code` and its message with quoted text, e-mail addresses, CPR-like numbers and
 *   every value the request carried (when the caller passes them) masked; the stack's first line likewise;
 * - its `cause`, the same way.
 */
export interface LoggableError {
  type: string;
  message: string;
  code?: string;
  severity?: string;
  routine?: string;
  table?: string;
  column?: string;
  constraint?: string;
  dataType?: string;
  stack?: string;
  cause?: LoggableError;
}

type PgFields = {
  code?: unknown; severity?: unknown; routine?: unknown; table_name?: unknown; column_name?: unknown; constraint_name?: unknown; data_type_name?: unknown;
};

/** postgres.js's PostgresError (the server's ErrorResponse); told apart by name and the server's fields. */
const isPostgresError = (err: Error): boolean => err.name === 'PostgresError' || ('routine' in err && 'severity' in err && 'code' in err);

const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

// Quoted text ("…", '…', `…`, «…»), e-mail addresses, and runs of digits that could be a CPR number (DDMMYY-SSSS), a
// phone number or an account: what typically carries data in a message written around a value. Digits inside a
// word (a UUID, a hash) are left alone: ids are logged anyway, and they say which row the fault was about.
const QUOTED = /"[^"]*"|'[^']*'|`[^`]*`|«[^»]*»/g;
const EMAIL = /[^\s@"'<>()]+@[^\s@"'<>()]+/g;
const NUMBERS = /(?<![\w-])(?:\d{6}-?\d{4}|\+?\d[\d ]{6,}\d)(?![\w-])/g;
// Request values shorter than this are too common to mask (`1`, `da`) and would shred the message.
const MIN_MASKED_LENGTH = 4;

function sanitise(message: string, requestValues: readonly string[]): string {
  let out = message;
  for (const value of requestValues) if (value.length >= MIN_MASKED_LENGTH) out = out.split(value).join(REDACTED);
  return out.replace(QUOTED, `"${REDACTED}"`).replace(EMAIL, REDACTED).replace(NUMBERS, REDACTED);
}

export function loggableError(err: unknown, requestValues: readonly string[] = [], depth = 0): LoggableError {
  if (!(err instanceof Error)) return { type: typeof err, message: REDACTED };
  const code = text((err as { code?: unknown }).code);
  if (isPostgresError(err)) {
    const pg = err as Error & PgFields;
    const out: LoggableError = { type: err.name, message: `PostgreSQL error${code ? ` ${code}` : ''} in ${text(pg.routine) ?? 'an unknown routine'}` };
    if (code) out.code = code;
    const fields: [keyof LoggableError, unknown][] = [
      ['severity', pg.severity], ['routine', pg.routine], ['table', pg.table_name], ['column', pg.column_name],
      ['constraint', pg.constraint_name], ['dataType', pg.data_type_name],
    ];
    for (const [key, value] of fields) if (text(value)) (out as unknown as Record<string, string>)[key] = text(value)!;
    // The stack's frames are code locations; its first line is the message, which is left out.
    if (err.stack) out.stack = [`${err.name}: ${out.message}`, ...err.stack.split('\n').filter((l) => /^\s+at /.test(l))].join('\n');
    return out;
  }
  const message = sanitise(err.message, requestValues);
  const out: LoggableError = { type: err.name, message };
  if (code) out.code = sanitise(code, requestValues);
  if (err.stack) out.stack = [`${err.name}: ${message}`, ...err.stack.split('\n').filter((l) => /^\s+at /.test(l))].join('\n');
  if (err.cause !== undefined && depth < 3) out.cause = loggableError(err.cause, requestValues, depth + 1);
  return out;
}

/** The strings a request carried in its path parameters, query and body: what an error message must not echo. */
export function requestValues(req: { params?: unknown; query?: unknown; body?: unknown }): string[] {
  const found: string[] = [];
  const walk = (v: unknown, depth: number) => {
    if (typeof v === 'string') found.push(v);
    else if (typeof v === 'number') found.push(String(v));
    else if (v && typeof v === 'object' && depth < 8) for (const inner of Object.values(v)) walk(inner, depth + 1);
  };
  walk(req.params, 0);
  walk(req.query, 0);
  walk(req.body, 0);
  // Longest first, so that a value containing another is masked whole.
  return [...new Set(found)].sort((a, b) => b.length - a.length);
}

/**
 * The `err` serializer of a service's logger: every logged error as loggableError shows it (without the request's
 * values, which only the error handler has); one already made loggable passes as it is.
 */
export const errSerializer = (err: unknown) => (err instanceof Error ? loggableError(err) : err) as { type: string; message: string; stack: string };
