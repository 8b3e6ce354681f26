import { spawn, type ChildProcess } from 'node:child_process';

/**
 * A workflows fixture in a child process, for the crash tests: it prints `ready` once registered with Restate, and,
 * when started with a fault, `stopped <point> <id>` where it halted, waiting to be killed.
 */
export interface WorkerProcess {
  child: ChildProcess;
  /** Where the child stopped and the id of what it stopped at (a reminder, a case, an invoice). */
  stopped: Promise<{ point: string; id: string }>;
  kill(): Promise<void>;
}

/** Timeout for a promise that would otherwise hang the test without saying what it waited for. */
export const within = <T>(what: string, p: Promise<T>, ms: number): Promise<T> => {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<never>((_r, reject) => (timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms))),
  ]);
};

/** Starts `script` with `args` and `env`, remembers it in `workers` (to kill in `after`) and waits for `ready`. */
export async function startWorkerProcess(script: string, args: string[], env: NodeJS.ProcessEnv, workers: Set<ChildProcess>): Promise<WorkerProcess> {
  const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
  workers.add(child);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  void exited.then(() => workers.delete(child));
  let out = '';
  const seen = (pattern: RegExp) =>
    new Promise<RegExpExecArray>((resolve, reject) => {
      const check = () => {
        const m = pattern.exec(out);
        if (m) resolve(m);
      };
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        check();
      });
      void exited.then(() => reject(new Error(`the worker exited (${child.exitCode ?? child.signalCode}) before printing ${pattern}`)));
      check();
    });
  const stopped = seen(/stopped (\w+) ([0-9a-f-]{36})\n/).then((m) => ({ point: m[1]!, id: m[2]! }));
  stopped.catch(() => {});
  await within('the worker to register', seen(/^ready\n/m), 20_000);
  return {
    child,
    stopped,
    async kill() {
      child.kill('SIGKILL');
      await exited;
    },
  };
}
