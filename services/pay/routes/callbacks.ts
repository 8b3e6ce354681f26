import type { FastifyInstance } from 'fastify';
import { InvalidProviderEvent } from '../../payments/providers/provider.ts';
import { UnknownCheckoutSession } from '../../payments/handle-provider-event.ts';
import { DomainError } from '../../shared/errors.ts';
import { callbackError } from '../plugins/errors.ts';
import { receiveProviderCallback, type CallbackDeps } from '../receive-provider-callback.ts';

/** `POST /callbacks/{provider}`: JSON in (its exact bytes, body-parsers.ts), JSON out. Only these book payments. */
export function callbackRoutes(app: FastifyInstance, deps: CallbackDeps): void {
  app.post<{ Params: { provider: string } }>('/callbacks/:provider', async (req, reply) => {
    if (req.params.provider !== deps.provider.name) return callbackError(reply, 404, 'route_not_found', 'No such callback.');
    const rawBody = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    let handled;
    try {
      handled = await receiveProviderCallback(deps, req.headers, rawBody, req.log);
    } catch (err) {
      if (err instanceof InvalidProviderEvent) return callbackError(reply, 400, 'invalid_event', err.message);
      if (err instanceof UnknownCheckoutSession) {
        // Signed by the provider but about a checkout this service never opened: money may have moved, so the
        // provider is told to keep it (and retry) and an operator is alerted.
        req.log.error({ err }, 'a provider event names an unknown checkout');
        return callbackError(reply, 404, 'checkout_session_not_found', err.message);
      }
      if (err instanceof DomainError) {
        req.log.error({ err, code: err.code }, 'a provider event could not be booked');
        return callbackError(reply, err.status, err.code, err.message);
      }
      throw err;
    }
    if (!handled) {
      req.log.warn('refused a provider callback without a valid signature');
      return callbackError(reply, 401, 'invalid_signature', 'The callback does not carry a valid, current signature.');
    }
    return reply.code(200).send({ received: true, effect: handled.effect });
  });
}
