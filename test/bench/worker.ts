/**
 * The bench stages' worker processes (the workflows process, the wake stage's worker): forked with IPC, ready when
 * they say so, stopped with a `stop` message and killed when they do not exit in time. One lifecycle for all stages.
 */
import { fork, type ChildProcess, type ForkOptions } from 'node:child_process';

export interface BenchWorker {
  child: ChildProcess;
  /** Asks the worker to stop; kills it after `killAfterMs`. Safe when it has exited already. */
  stop(): Promise<void>;
}

/** Forks `file`, waits for its first IPC message (ready), and refuses with `what` when it exits first. */
export async function forkBenchWorker(file: string, options: ForkOptions, what: string, killAfterMs = 15_000): Promise<BenchWorker> {
  const child = fork(file, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], ...options });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.send({ type: 'stop' });
    const timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    await exited;
    clearTimeout(timer);
  };
  try {
    await new Promise<void>((ready, fail) => {
      child.once('message', () => ready());
      void exited.then(() => fail(new Error(`${what} exited before it was ready`)));
    });
  } catch (err) {
    await stop();
    throw err;
  }
  return { child, stop };
}
