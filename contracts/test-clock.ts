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

// One object with both fields optional and exactly one present, rather than a union: a bad `days` is then reported at
// /days with its bound, not as a missing `to`.
export const TestClockAdvance = Type.Object(
  {
    to: Type.Optional(DateTimeString),
    days: Type.Optional(Type.Integer({ minimum: 1, maximum: 3650 })),
  },
  {
    additionalProperties: false,
    minProperties: 1,
    maxProperties: 1,
    title: 'TestClockAdvance',
    description: 'Exactly one of `{to}` (an instant, never earlier than the clock) or `{days}` (1..3650)',
  },
);
export type TestClockAdvance = Static<typeof TestClockAdvance>;
