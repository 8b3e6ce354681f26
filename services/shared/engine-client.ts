import type { WorkflowHandler, WorkflowInputs, WorkflowService, WorkTarget } from '../../contracts/workflows.ts';
import { claimWake, laterWake, unclaimWake } from '../clock/wake-index.ts';
import type { Db } from './db.ts';
import { inChildSpan, SpanKind, traceHeaders } from '../observability/tracing.ts';

/**
 * The one way services hand work to the durable workflows: a one-way call through Restate's ingress
 * (`POST …/send`, answered 202), typed by contracts/workflows.ts. The caller does not wait for the work, only for
 * the engine to have logged the invocation. With an idempotency key, Restate accepts a repeated hand-off once.
 *
 * Every hand-off follows a commit whose effect is already durable, and every handler it reaches is also listed in
 * the wake index (or the event outbox) in that commit, so a lost hand-off only delays: the housekeeping loop pokes
 * what is overdue.
 *
 * Under a traced request or step, each hand-off is a CLIENT span whose `traceparent` goes with the call, so the
 * invocation it starts joins the caller's trace. Restate keeps the headers of an ingress call in its journal: the
 * trace context is all that is added, never a credential.
 */
export interface EngineClient {
  send<S extends WorkflowService, H extends WorkflowHandler<S>>(
    call: { service: S; handler: H; key?: string; input?: WorkflowInputs[S][H] },
    opts?: { idempotencyKey?: string },
  ): Promise<void>;
  /**
   * Hands a wake-index target on now, if it is due and not in flight: claims its row and sends the claim to its
   * handler (which re-reads the facts and acts only on what is due). A row that is not due yet moves its shard
   * scheduler's timer to its time, when that is earlier. A row claimed already is left to the invocation
   * that holds it, whose release hands it on again if it is still due; so a row never has two invocations in flight
   * or queued, however often it is poked. Without a database (the event relay, which pokes nothing) it only sends.
   */
  poke(target: WorkTarget): Promise<void>;
}

export const HAND_OFF_TIMEOUT_MS = 5000;

export function createEngineClient(ingressUrl: string, db?: Db): EngineClient {
  const base = ingressUrl.replace(/\/+$/, '');
  const send: EngineClient['send'] = async (call, opts = {}) => {
    const path = call.key === undefined ? `${call.service}/${call.handler}` : `${call.service}/${encodeURIComponent(call.key)}/${call.handler}`;
    const target = `${call.service}/${call.handler}`;
    await inChildSpan(`POST ${target}/send`, { kind: SpanKind.CLIENT, attributes: { 'http.request.method': 'POST', 'restate.invocation.target': target } }, async (span) => {
      const res = await fetch(`${base}/${path}/send`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(opts.idempotencyKey ? { 'idempotency-key': opts.idempotencyKey } : {}),
          ...traceHeaders(),
        },
        body: JSON.stringify(call.input ?? null),
        signal: AbortSignal.timeout(HAND_OFF_TIMEOUT_MS),
      });
      span?.setAttribute('http.response.status_code', res.status);
      if (res.status !== 202 && res.status !== 200) {
        throw new Error(`Restate refused the hand-off to ${call.service}.${call.handler}: ${res.status} ${await res.text()}`);
      }
    });
  };
  const sendClaim = (t: Pick<WorkTarget, 'service' | 'key'>, handler: string, claim?: number) =>
    send(
      { service: t.service, handler: handler as never, key: t.key, input: (claim === undefined ? {} : { claim }) as never },
      claim === undefined ? {} : { idempotencyKey: `wake:${t.service}:${t.key}:${claim}` },
    );
  return {
    send,
    poke: async (t) => {
      if (!db) return sendClaim(t, t.handler);
      const claimed = await db.read((sql) => claimWake(sql, t));
      if (!claimed) {
        // Not due yet (a retry, a step on a later day): the shard's timer moves there if it is armed for later.
        const later = await laterWake(db, t);
        if (later) await send({ service: 'WakeScheduler', handler: 'nudge', key: String(later.shard), input: { atMs: later.nudgeAtMs } });
        return;
      }
      try {
        await sendClaim(t, claimed.handler, claimed.token);
      } catch (err) {
        // Given back, so the row is handed on by its scheduler instead of waiting for the claim's lease.
        await unclaimWake(db, claimed).catch(() => undefined);
        throw err;
      }
    },
  };
}
