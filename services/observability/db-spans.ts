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
      const note = (strings: readonly string[], values: readonly unknown[]) => {
        const summary = statementSummary(statementText(strings, values));
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

/**
 * The pool or transaction as the use case sees it, noting each statement it runs. A statement is noted when it is
 * awaited (postgres.js sends a query then): a sql`…` that is never awaited is a fragment spliced into another one.
 */
function watched<Q extends object>(sql: Q, note: (strings: readonly string[], values: readonly unknown[]) => void): Q {
  return new Proxy(sql, {
    apply(target, thisArg, args: unknown[]) {
      const query: unknown = Reflect.apply(target as (...a: unknown[]) => unknown, thisArg, args);
      const strings = args[0];
      // sql(…) with values or identifiers is a helper, not a statement.
      if (!Array.isArray(strings) || !('raw' in strings) || typeof (query as PromiseLike<unknown> | undefined)?.then !== 'function') return query;
      // Called with the query as `this` below, as postgres.js's own then expects.
      // eslint-disable-next-line @typescript-eslint/unbound-method
      const then = (query as PromiseLike<unknown>).then;
      let noted = false;
      Object.defineProperty(query, 'then', {
        configurable: true,
        writable: true,
        value(this: PromiseLike<unknown>, ...a: Parameters<PromiseLike<unknown>['then']>) {
          if (!noted) {
            noted = true;
            note(strings as readonly string[], args.slice(1));
          }
          return then.apply(this, a);
        },
      });
      return query;
    },
  });
}

// A table name, plain or quoted (sql(identifier) quotes it).
const TABLE = String.raw`"?([a-z_][\w.]*)"?`;
const TABLE_AFTER: Record<string, RegExp> = {
  SELECT: new RegExp(String.raw`\bfrom\s+${TABLE}`, 'i'),
  DELETE: new RegExp(String.raw`\bfrom\s+${TABLE}`, 'i'),
  INSERT: new RegExp(String.raw`\binto\s+${TABLE}`, 'i'),
  UPDATE: new RegExp(String.raw`\bupdate\s+${TABLE}`, 'i'),
};

/** A fragment built with sql`…` (postgres.js keeps its template's strings and values), spliced into a statement. */
interface Fragment {
  strings: readonly string[];
  args: readonly unknown[];
}
const isFragment = (v: unknown): v is Fragment =>
  typeof v === 'object' && v !== null && Array.isArray((v as Fragment).strings) && Array.isArray((v as Fragment).args);

/** A statement's literal text with its fragments spliced in and every value as `?`: nothing a caller passed. */
export function statementText(strings: readonly string[], values: readonly unknown[]): string {
  let text = strings[0] ?? '';
  for (let i = 1; i < strings.length; i++) {
    const v = values[i - 1];
    text += `${isFragment(v) ? statementText(v.strings, v.args) : '?'}${strings[i]}`;
  }
  return text;
}

// The write a WITH statement does (its FROMs name its own sub-queries as often as tables).
const WRITE_IN_WITH = new RegExp(String.raw`\b(update|insert\s+into|delete\s+from)\s+${TABLE}`, 'i');

/**
 * `SELECT invoices` from a statement's text: its first keyword and the table it reads or writes. A WITH statement
 * is named by the write it does (`UPDATE invoices`), else just `WITH`.
 */
export function statementSummary(text: string): { operation: string; table?: string; text: string } {
  let operation = (/^\s*\(?\s*([a-z]+)/i.exec(text)?.[1] ?? 'SQL').toUpperCase();
  let table = TABLE_AFTER[operation]?.exec(text)?.[1];
  const write = operation === 'WITH' ? WRITE_IN_WITH.exec(text) : null;
  if (write) {
    operation = write[1]!.split(/\s+/)[0]!.toUpperCase();
    table = write[2];
  }
  return { operation, ...(table ? { table } : {}), text: table ? `${operation} ${table}` : operation };
}
