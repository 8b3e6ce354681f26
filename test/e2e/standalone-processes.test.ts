import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { freePort } from '../../deploy/local/ports.ts';
import { TEST_MASTER_KEY } from '../helpers/context.ts';
import { ROOT } from '../helpers/scripts.ts';

/**
 * The standalone processes as a supervisor runs them: `npm run start:api` / `start:pay`, stopped by signalling npm.
 * npm hands the signal to its script's process; a script that ran node under a shell would leave node running on
 * its port, an orphan, while npm reported it stopped.
 */
describe('standalone processes stop with the npm that runs them', function () {
  this.timeout(60_000);

  for (const [script, portVar, ready] of [
    ['start:api', 'PORT', 'Server listening at'],
    ['start:pay', 'PAY_PORT', 'pay page listening'],
  ] as const) {
    it(`npm run ${script}: SIGTERM to npm stops the server and frees its port`, async () => {
      const port = await freePort();
      const child = spawn('npm', ['run', '-s', script], {
        cwd: ROOT,
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          DATABASE_URL: process.env.TEST_DATABASE_URL!,
          DATA_ENCRYPTION_KEY: TEST_MASTER_KEY.toString('hex'),
          HOST: '127.0.0.1',
          PAY_HOST: '127.0.0.1',
          // Each on a free metrics port of its own: never a clash with a stack running on this machine.
          METRICS_PORT: '0',
          [portVar]: String(port),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
      try {
        const deadline = Date.now() + 30_000;
        while (!out.includes(ready)) {
          if (Date.now() > deadline || child.exitCode !== null) assert.fail(`${script} did not start:\n${out}`);
          await new Promise((r) => setTimeout(r, 100));
        }
        assert.equal((await fetch(`http://127.0.0.1:${port}/healthz`)).status, 200);
        child.kill('SIGTERM');
        await exited;
        // Give a process that is still there a moment to show it: the port must stay closed.
        await new Promise((r) => setTimeout(r, 500));
        await assert.rejects(fetch(`http://127.0.0.1:${port}/healthz`), `${script} still answers on ${port} after npm stopped`);
      } finally {
        if (child.exitCode === null) child.kill('SIGKILL');
      }
    });
  }
});
