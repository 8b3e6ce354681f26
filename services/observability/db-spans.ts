import { SpanKind, SpanStatusCode, type Span } from '@opentelemetry/api';
import { childTracer } from './tracing.ts';

/**
 * A span per unit of work on PostgreSQL (a `Db.read` or a `Db.tx`), the one choke point every use case passes: the
 * driver (postgres.js) has no instrumentation of its own. The span is named after its first statement's keyword
 * and table (`SELECT invoices`, `transaction INSERT payments`) and gets an event per statement with the same
 * summary. Only the statement's own text is looked at, never its parameters: values are never recorded.
 * Nothing is done outside a recording span.
 */
export async function inUnitOfWork<T>(kind: 'read' | 'transaction', run: (watch: <Q extends object>(sql: Q) => Q) => Promise<T>): Promise<T> {
  const tracer = childTracer();
  if (!tracer) return run((sql) => sql);
  return tracer.startActiveSpan(
    kind === 'transaction' ? 'transaction' : 'query',
    { kind: SpanKind.CLIENT, attributes: { 'db.system': 'postgresql', 'db.system.name': 'postgresql' } },
    async (span) => {
      let statements = 0;
      const note = (strings: readonly string[]) => {
        const summary = statementSummary(strings);
        if (statements === 0) {
          span.updateName(kind === 'transaction' ? `transaction ${summary.text}` : summary.text);
          span.setAttribute('db.operation.name', summary.operation);
          if (summary.table) span.setAttribute('db.collection.name', summary.table);
        }
        statements++;
        span.addEvent('statement', { 'db.query.summary': summary.text });
      };
      try {
        return await run((sql) => watched(sql, note));
      } catch (err) {
        failed(span, err);
        throw err;
      } finally {
        span.setAttribute('db.statement.count', statements);
        span.end();
      }
    },
  );
}

function failed(span: Span, err: unknown): void {
  // A PostgreSQL error names its SQLSTATE, never a value; the message may quote one (a duplicate key), so it is left out.
  const code = (err as { code?: unknown }).code;
  span.setStatus({ code: SpanStatusCode.ERROR, ...(typeof code === 'string' ? { message: code } : {}) });
  if (typeof code === 'string') span.setAttribute('db.response.status_code', code);
}

/** The pool or transaction as the use case sees it, noting every tagged-template statement it sends. */
function watched<Q extends object>(sql: Q, note: (strings: readonly string[]) => void): Q {
  return new Proxy(sql, {
    apply(target, thisArg, args: unknown[]) {
      const first = args[0];
      // sql`…` passes the template's strings; sql(…) with values or identifiers is a fragment helper, not a statement.
      if (Array.isArray(first) && 'raw' in first) note(first as readonly string[]);
      return Reflect.apply(target as (...a: unknown[]) => unknown, thisArg, args);
    },
  });
}

const TABLE_AFTER: Record<string, RegExp> = {
  SELECT: /\bfrom\s+([a-z_][\w.]*)/i,
  WITH: /\bfrom\s+([a-z_][\w.]*)/i,
  DELETE: /\bfrom\s+([a-z_][\w.]*)/i,
  INSERT: /\binto\s+([a-z_][\w.]*)/i,
  UPDATE: /\bupdate\s+([a-z_][\w.]*)/i,
};

/** `SELECT invoices` from a statement's literal text: its first keyword and the table it reads or writes. */
export function statementSummary(strings: readonly string[]): { operation: string; table?: string; text: string } {
  const text = strings.join(' ');
  const operation = (/^\s*\(?\s*([a-z]+)/i.exec(text)?.[1] ?? 'SQL').toUpperCase();
  const table = TABLE_AFTER[operation]?.exec(text)?.[1];
  return { operation, ...(table ? { table } : {}), text: table ? `${operation} ${table}` : operation };
}
