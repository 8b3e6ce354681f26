/** What run.ts and server.ts agree on. Kept apart so that importing it never starts a server. */
/** `app`: the real app with rate limiting off; `applimit`: the same with the API rate limits counting in Redis. */
export type ServerKind = 'h' | 's' | 'i' | 'app' | 'applimit';

export const SERVER_KINDS: readonly ServerKind[] = ['h', 's', 'i', 'app', 'applimit'];

/** Sent by the child once it listens; then the parent may send {type:'usage'} and {type:'stop'}. */
export interface ReadyMessage {
  type: 'ready';
  port: number;
}

/** The child's CPU time so far, sent when the parent asks with {type:'usage'}. */
export interface UsageMessage {
  type: 'usage';
  cpu: NodeJS.CpuUsage;
}

/** The table the I baseline writes to. The bench creates it, so the app's migrations stay untouched. */
export const BENCH_TABLE = 'bench_inserts';
/** C0's copy of the customers table. */
export const BENCH_CUSTOMERS_TABLE = 'bench_customers';
