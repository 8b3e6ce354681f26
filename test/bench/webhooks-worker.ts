/**
 * The workflows process of the webhook and dunning benches, as production runs it: `runWorkflows` with the relay, the delivery
 * objects and the sweeps, in a process of its own (forked by webhooks.ts and dunning.ts). Settings come as the environment the
 * real entry point reads. Prints nothing; answers `ready` over IPC and stops on `stop`.
 */
import { Writable } from 'node:stream';
import { readConfig } from '../../services/shared/config.ts';
import { runWorkflows } from '../../workflows/main.ts';

const running = await runWorkflows(readConfig(), { logStream: new Writable({ write: (_c, _e, cb) => cb() }) });
process.send!({ type: 'ready' });
process.on('message', (m: { type?: string }) => {
  if (m.type !== 'stop') return;
  void running.close().finally(() => process.exit(0));
});
