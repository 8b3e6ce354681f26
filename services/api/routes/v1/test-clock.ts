import type { FastifyInstance } from 'fastify';
import { Envelope } from '../../../../contracts/common.ts';
import { TestClock, TestClockAdvance } from '../../../../contracts/test-clock.ts';
import { copenhagenToday } from '../../../shared/clock.ts';
import { DomainError } from '../../../shared/errors.ts';
import { advanceTestClock } from '../../../clock/test-clock.ts';
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
      const now = await deps.clock.now(req.auth.organizationId);
      return { data: { mode: req.auth.sandbox ? 'test' : 'live', now: now.toISOString(), today: copenhagenToday(now) }, meta: {} };
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
          'only (403 `sandbox_only`). Every pending timed step whose business time has come (webhook retries, and ' +
          'later reminders and subscription periods) runs as if the time had passed.',
        tags,
        body: TestClockAdvance,
        response: { 200: Envelope(TestClock) },
      },
    },
    async (req, reply) => {
      if (!req.auth.sandbox) throw new DomainError('sandbox_only', 'Only sandbox organisations have a test clock; live organisations run on real time.');
      const org = req.auth.organizationId;
      return mutate(deps, req, reply, async (tx) => ({
        status: 200,
        data: await advanceTestClock(tx, org, req.body),
        afterCommit: async () => {
          if (!deps.wakeups) {
            req.log.warn('no workflow engine configured: steps the advance made due wait for the overdue sweep');
            return;
          }
          await deps.wakeups.wakeDue(org);
        },
      }));
    },
  );
}
