import assert from 'node:assert/strict';
import { connect } from 'node:net';
import Fastify from 'fastify';
import { closeServer } from '../../services/shared/close-server.ts';

describe('closeServer', () => {
  it('does not wait on a client that sent half a request: its connection is cut after the grace period', async () => {
    const app = Fastify();
    app.post('/x', async () => ({ ok: true }));
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as { port: number };
    const socket = connect(port, '127.0.0.1');
    await new Promise<void>((r) => socket.once('connect', () => r()));
    // Headers promise 100 bytes; 10 arrive, and the client then goes quiet.
    socket.write('POST /x HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a":"bcd"');
    const ended = new Promise<void>((r) => socket.once('close', () => r()));
    await new Promise((r) => setTimeout(r, 50));
    const started = performance.now();
    await closeServer(app, 300);
    const took = performance.now() - started;
    await ended;
    assert.ok(took >= 250, `closed after ${took} ms: the request in flight must get its grace period`);
    assert.ok(took < 2000, `closed after ${took} ms: a stalled client must not hold the stop`);
  });

  it('lets a request in flight finish within the grace period', async () => {
    const app = Fastify();
    app.get('/slow', async () => {
      await new Promise((r) => setTimeout(r, 200));
      return { done: true };
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as { port: number };
    const answer = fetch(`http://127.0.0.1:${port}/slow`).then((r) => r.json());
    await new Promise((r) => setTimeout(r, 50));
    const started = performance.now();
    await closeServer(app, 5000);
    assert.deepEqual(await answer, { done: true });
    // The answered connection is closed once idle: the stop does not sit out the grace period.
    assert.ok(performance.now() - started < 1500, `closed after ${performance.now() - started} ms`);
  });
});
