import * as restate from '@restatedev/restate-sdk';

/**
 * A stand-in for Restate's handler context, for testing workflow logic against fake activities without servers.
 * It keeps each key's state in memory, runs steps with the retry semantics of `ctx.run` (a TerminalError is final;
 * any other error is retried up to `maxRetryAttempts` attempts, then becomes a TerminalError), and records the
 * one-way calls and cancellations a handler makes. A step without a bound on its attempts fails the test: no
 * handler may retry forever.
 */
export interface SentCall {
  service: string;
  handler: string;
  key: string | undefined;
  input: unknown;
  delayMs: number | undefined;
  invocationId: string;
}

export class FakeEngine {
  readonly state = new Map<string, Map<string, unknown>>();
  readonly sent: SentCall[] = [];
  readonly cancelled: string[] = [];
  readonly steps: { name: string; attempts: number; outcome: 'ok' | 'failed' }[] = [];
  readonly warnings: string[] = [];
  now = Date.parse('2026-03-02T08:00:00Z');
  private ids = 0;

  /** A context for one invocation of `key` (its id defaults to a fresh one; pass a timer's id to play that timer). */
  context(key: string, invocationId = this.nextId()): restate.ObjectContext {
    return contextOf(this, key, invocationId);
  }

  /** The calls sent to `service.handler`, in order. */
  sentTo(service: string, handler: string): SentCall[] {
    return this.sent.filter((c) => c.service === service && c.handler === handler);
  }

  nextId(): string {
    // Restate invocation ids have a fixed shape; the parser in the SDK accepts this one.
    return `inv_1${String(++this.ids).padStart(34, '0')}`;
  }
}

function contextOf(engine: FakeEngine, key: string, invocationId: string): restate.ObjectContext {
    const store = engine.state.get(key) ?? new Map<string, unknown>();
    engine.state.set(key, store);
    const ctx = {
      key,
      request: () => ({ id: invocationId }),
      get: async (name: string) => (store.has(name) ? structuredClone(store.get(name)) : null),
      set: (name: string, value: unknown) => void store.set(name, structuredClone(value)),
      clear: (name: string) => void store.delete(name),
      clearAll: () => store.clear(),
      stateKeys: async () => [...store.keys()],
      date: { now: async () => engine.now, toJSON: async () => new Date(engine.now).toJSON() },
      console: { ...console, warn: (msg: string) => engine.warnings.push(String(msg)), info: () => {}, log: () => {}, debug: () => {} },
      run: async <T>(name: string, action: () => Promise<T>, opts?: { maxRetryAttempts?: number }): Promise<T> => {
        const max = opts?.maxRetryAttempts;
        if (max === undefined) throw new Error(`step "${name}" has no bound on its attempts`);
        for (let attempt = 1; ; attempt++) {
          try {
            const value = await action();
            engine.steps.push({ name, attempts: attempt, outcome: 'ok' });
            // The journal stores JSON: what a step returns is what a replay would see.
            return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
          } catch (err) {
            if (err instanceof restate.TerminalError || attempt >= max) {
              engine.steps.push({ name, attempts: attempt, outcome: 'failed' });
              throw err instanceof restate.TerminalError ? err : new restate.TerminalError((err as Error).message);
            }
          }
        }
      },
      genericSend: (call: { service: string; method: string; key?: string; parameter: unknown; delay?: number }) => {
        const id = engine.nextId();
        engine.sent.push({ service: call.service, handler: call.method, key: call.key, input: call.parameter, delayMs: call.delay, invocationId: id });
        return { invocationId: Promise.resolve(id) };
      },
      invocation: (id: { toString(): string }) => ({ cancel: () => void engine.cancelled.push(String(id)) }),
    };
    return ctx as unknown as restate.ObjectContext;
}

/**
 * Handler `name` of a Restate service or object definition, callable directly as the engine would call it (the
 * definition keeps its handlers under `object` or `service`, which its public type does not show).
 */
export function handlerOf<I, O>(definition: unknown, name: string): (ctx: restate.ObjectContext, input?: I) => Promise<O> {
  const def = definition as { object?: Record<string, unknown>; service?: Record<string, unknown> };
  const fn = (def.object ?? def.service ?? {})[name];
  if (typeof fn !== 'function') throw new Error(`no handler ${name}`);
  return fn as (ctx: restate.ObjectContext, input?: I) => Promise<O>;
}
