import type { WorkflowHandler, WorkflowInputs, WorkflowService, WorkTarget } from '../../contracts/workflows.ts';

/**
 * The one way services hand work to the durable workflows: a one-way call through Restate's ingress
 * (`POST …/send`, answered 202), typed by contracts/workflows.ts. The caller does not wait for the work, only for
 * the engine to have logged the invocation. With an idempotency key, Restate accepts a repeated hand-off once.
 *
 * Every hand-off follows a commit whose effect is already durable, and every handler it reaches is also listed in
 * the wake index (or the event outbox) in that commit, so a lost hand-off only delays: the housekeeping loop pokes
 * what is overdue.
 */
export interface EngineClient {
  send<S extends WorkflowService, H extends WorkflowHandler<S>>(
    call: { service: S; handler: H; key?: string; input?: WorkflowInputs[S][H] },
    opts?: { idempotencyKey?: string },
  ): Promise<void>;
  /** Pokes a wake-index target now (its handler re-reads the facts and acts only when something is due). */
  poke(target: WorkTarget): Promise<void>;
}

export const HAND_OFF_TIMEOUT_MS = 5000;

export function createEngineClient(ingressUrl: string): EngineClient {
  const base = ingressUrl.replace(/\/+$/, '');
  const send: EngineClient['send'] = async (call, opts = {}) => {
    const path = call.key === undefined ? `${call.service}/${call.handler}` : `${call.service}/${encodeURIComponent(call.key)}/${call.handler}`;
    const res = await fetch(`${base}/${path}/send`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(opts.idempotencyKey ? { 'idempotency-key': opts.idempotencyKey } : {}) },
      body: JSON.stringify(call.input ?? null),
      signal: AbortSignal.timeout(HAND_OFF_TIMEOUT_MS),
    });
    if (res.status !== 202 && res.status !== 200) {
      throw new Error(`Restate refused the hand-off to ${call.service}.${call.handler}: ${res.status} ${await res.text()}`);
    }
  };
  return {
    send,
    // Every wake-index target takes a poke: an empty input (contracts/workflows.ts, WorkTarget).
    poke: (t) => send({ service: t.service, handler: t.handler as never, key: t.key, input: {} as never }),
  };
}
