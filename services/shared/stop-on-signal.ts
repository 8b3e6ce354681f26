/**
 * The shutdown of a long-running entry point: the first SIGTERM or SIGINT runs `close` once and sets the exit code
 * (0 when it finished, 1 when it failed); further signals while it runs change nothing.
 */
export function stopOnSignal(close: () => Promise<void>, log: (event: 'stopping' | 'stop failed', detail: string) => void): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log('stopping', signal);
    close().then(
      () => (process.exitCode = 0),
      (err: unknown) => {
        log('stop failed', String((err as Error).message ?? err));
        process.exitCode = 1;
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}
