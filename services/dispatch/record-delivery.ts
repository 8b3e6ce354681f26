import type { Db } from '../shared/db.ts';

/**
 * How one kind of outbound document records what its delivery did (workflows/shared/dispatch.ts `record` and
 * `give-up`), declared with the kind: each kind keeps its own table and columns (the invoice's send, the reminder's
 * delivery, the case's påkrav date, the sign-in link's mail outcome), and `ref` is what names its row. A kind without
 * `giveUp` parks its work when the delivery's retries run out.
 */
export interface DeliveryRecord<Ref, Attempt, Recorded> {
  readonly record: (db: Db, ref: Ref, attempt: Attempt) => Promise<Recorded>;
  readonly giveUp?: (db: Db, ref: Ref, reason: string) => Promise<Recorded>;
}

/** The kinds the workflows deliver, by the name they pass to `recordDelivery` and `giveUpDelivery` (any ref, any attempt). */
export type DeliveryRecords = Record<string, DeliveryRecord<never, never, unknown>>;

type RefOf<R> = R extends DeliveryRecord<infer Ref, never, unknown> ? Ref : never;
type AttemptOf<R> = R extends DeliveryRecord<never, infer A, unknown> ? A : never;
type RecordedOf<R> = R extends DeliveryRecord<never, never, infer Out> ? Out : never;
type Loose = DeliveryRecord<unknown, unknown, unknown>;

/** The one record step of every delivery: hands the journaled attempt to its kind's record adapter. */
export function recordDelivery<K extends DeliveryRecords, N extends keyof K & string>(
  db: Db,
  records: K,
  kind: N,
  ref: RefOf<K[N]>,
  attempt: AttemptOf<K[N]>,
): Promise<RecordedOf<K[N]>> {
  return (recordOf(records, kind) as Loose).record(db, ref, attempt) as Promise<RecordedOf<K[N]>>;
}

/** The one give-up step of every delivery whose retries ran out: its kind records it as undeliverable. */
export function giveUpDelivery<K extends DeliveryRecords, N extends keyof K & string>(db: Db, records: K, kind: N, ref: RefOf<K[N]>, reason: string): Promise<RecordedOf<K[N]>> {
  const { giveUp } = recordOf(records, kind) as Loose;
  if (!giveUp) throw new Error(`a ${kind} delivery has no give-up step: its work is parked instead`);
  return giveUp(db, ref, reason) as Promise<RecordedOf<K[N]>>;
}

function recordOf(records: DeliveryRecords, kind: string): DeliveryRecord<never, never, unknown> {
  const record = records[kind];
  if (!record) throw new Error(`no delivery record for the kind ${kind}`);
  return record;
}
