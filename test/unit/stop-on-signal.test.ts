import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';

async function run(mode: 'ok' | 'fail'): Promise<{ code: number | null; out: string }> {
  const child = spawn(process.execPath, ['test/unit/fixtures/stop-on-signal-child.ts', mode], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  await new Promise<void>((resolve) =>
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('ready')) resolve();
    }),
  );
  child.kill('SIGTERM');
  child.kill('SIGINT'); // a second signal while stopping changes nothing
  const code = await new Promise<number | null>((r) => child.once('exit', r));
  return { code, out };
}

describe('stopOnSignal', () => {
  it('closes once on the first signal and exits 0', async () => {
    const { code, out } = await run('ok');
    assert.equal(code, 0);
    assert.equal(out.match(/stopping SIG(TERM|INT)/g)?.length, 1);
    assert.equal(out.match(/closed/g)?.length, 1);
  });

  it('exits 1 when closing fails, saying why', async () => {
    const { code, out } = await run('fail');
    assert.equal(code, 1);
    assert.match(out, /stop failed close broke/);
  });
});
