import type { FastifyInstance } from 'fastify';

/** How long a stop waits for requests in flight before it cuts the connections still open. */
export const CLOSE_GRACE_MS = 3000;

/**
 * Stops taking requests and lets those in flight finish (idle keep-alive connections are closed at once). A
 * connection still open after `graceMs` belongs to a client that will not finish soon (half a request sent, a stalled
 * upload, a slow reader) and is cut, so a stop never waits on a client: `npm start` must be down within 10 s.
 */
export async function closeServer(app: FastifyInstance, graceMs = CLOSE_GRACE_MS): Promise<void> {
  const cut = setTimeout(() => app.server.closeAllConnections(), graceMs);
  cut.unref();
  // Node closes the connections that are idle when the server closes; one whose response goes out afterwards stays
  // open as keep-alive, so connections are closed as soon as they fall idle.
  const idle = setInterval(() => app.server.closeIdleConnections(), 50);
  idle.unref();
  try {
    await app.close();
  } finally {
    clearTimeout(cut);
    clearInterval(idle);
  }
}
