import type * as restate from '@restatedev/restate-sdk';
import type { LogLine } from '../endpoint.ts';

/**
 * One JSON line per durable step that runs (`ctx.run`; replayed steps are skipped by the SDK): the invocation, its
 * target, the step's name, how long it took and whether it failed. Under tracing it is written inside the step's
 * span, so the line carries that span's `trace_id` and `span_id` (endpoint.ts, createJsonLog). Neither the step's
 * input nor its result is logged: they may hold personal data; the error's class is, its message is not.
 */
export function stepLogHook(log: LogLine): restate.HooksProvider {
  return ({ request }) => ({
    interceptor: {
      run: async (name, next) => {
        const started = performance.now();
        const fields = () => ({ invocationId: request.id, target: String(request.target), step: name, durationMs: Math.round(performance.now() - started) });
        try {
          await next();
          log('info', 'step completed', fields());
        } catch (err) {
          log('warn', 'step failed', { ...fields(), error: err instanceof Error ? err.name : typeof err });
          throw err;
        }
      },
    },
  });
}
