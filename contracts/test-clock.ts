import { Type, type Static } from 'typebox';
import { DateString, DateTimeString } from './common.ts';

export const TestClock = Type.Object(
  {
    mode: Type.Union([Type.Literal('live'), Type.Literal('test')], {
      description: '`test` for sandbox organisations (their clock can be advanced), `live` otherwise',
    }),
    now: DateTimeString,
    today: DateString,
  },
  { title: 'TestClock' },
);
export type TestClock = Static<typeof TestClock>;

export const TestClockAdvance = Type.Union(
  [
    Type.Object({ to: DateTimeString }, { additionalProperties: false }),
    Type.Object({ days: Type.Integer({ minimum: 1, maximum: 3650 }) }, { additionalProperties: false }),
  ],
  { title: 'TestClockAdvance', description: 'Either `{to}` (an instant, never earlier than the clock) or `{days}` (1..3650)' },
);
export type TestClockAdvance = Static<typeof TestClockAdvance>;
