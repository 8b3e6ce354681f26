import type { FastifyInstance } from 'fastify';
import { Envelope } from '../../../../contracts/common.ts';
import { TestClock, TestClockAdvance } from '../../../../contracts/test-clock.ts';
import { clockView } from '../../../clock/test-clock.ts';
import { advanceSandboxClock } from '../../../clock/advance-sandbox-clock.ts';
import { mutate } from '../../idempotency.ts';
import type { AppDeps } from '../../app.ts';

const tags = ['Test clock'];

export function testClockRoutes(app: FastifyInstance, deps: AppDeps): void {
  app.get(
    '/test-clock',
    {
      config: { scope: 'settings:read' },
      schema: {
        summary: 'The organisation’s business clock',
        description: '`mode` is `test` for sandbox organisations (their clock can be advanced) and `live` otherwise.',
        tags,
        response: { 200: Envelope(TestClock) },
      },
    },
    async (req) => {
      return { data: clockView(req.auth.sandbox ? 'test' : 'live', await deps.clock.now(req.auth.organizationId)), meta: {} };
    },
  );

  app.post<{ Body: TestClockAdvance }>(
    '/test-clock/advance',
    {
      config: { scope: 'settings:write' },
      schema: {
        summary: 'Advance a sandbox organisation’s test clock',
        description:
          '`{to}` (an instant) or `{days}` (1..3650). Forward only (422 `test_clock_backwards`); sandbox organisations ' +
          'only (403 `sandbox_only`). After the advance, every pending timed step whose business time has come is woken: ' +
          'a waiting webhook delivery makes its next attempt (one advance triggers one attempt, not the whole retry ' +
          'schedule at once).',
        tags,
        body: TestClockAdvance,
        response: { 200: Envelope(TestClock) },
      },
    },
    async (req, reply) => mutate(deps, req, reply, advanceSandboxClock(deps, req.auth, req.body, req.log)),
  );
}
