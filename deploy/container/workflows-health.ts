/**
 * The workflows process's probe for Kubernetes: `node deploy/container/workflows-health.ts <port>` exits 0 when the
 * Restate endpoint on 127.0.0.1:<port> answers `GET /health` with 200, 1 otherwise (within 2 s).
 *
 * The endpoint speaks HTTP/2 without TLS only (h2c, as restate-server calls it), and the kubelet's httpGet probes
 * speak HTTP/1.1, so the probe is this command (an exec probe). `/health` is the Restate SDK's own route: it needs
 * no request signature, so it works with RESTATE_IDENTITY_KEYS set too.
 */
import * as http2 from 'node:http2';

const TIMEOUT_MS = 2000;

export function probeWorkflowsHealth(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const session = http2.connect(`http://${host}:${port}`);
    const done = (ok: boolean) => {
      clearTimeout(timer);
      session.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), TIMEOUT_MS);
    session.on('error', () => done(false));
    const req = session.request({ ':method': 'GET', ':path': '/health' });
    req.on('response', (headers) => {
      const status = headers[':status'];
      req.resume();
      req.on('end', () => done(status === 200));
    });
    req.on('error', () => done(false));
    req.end();
  });
}

if (import.meta.main) {
  const port = Number(process.argv[2]);
  if (!Number.isInteger(port) || port <= 0 || port > 65535) {
    process.stderr.write('usage: node deploy/container/workflows-health.ts <port>\n');
    process.exit(2);
  }
  process.exit((await probeWorkflowsHealth(port)) ? 0 : 1);
}
