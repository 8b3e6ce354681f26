import type { ReminderFlowVersion } from '../../contracts/reminder-flows.ts';
import { FLOW_LIFECYCLE } from './flow-lifecycle.ts';

/**
 * The platform's standard flow, read with `GET /v1/reminder-flows/STANDARD/versions/1?standard=true`: the statutory
 * default plan (docs/reminders.md, the reminder settings' defaults) in the graph format. No payment reminder; three
 * reminders on days 7, 14 and 21 after the due date at the statutory fee, by e-mail or, without an address, by
 * letter; no collections step. It is never editable, needs no approval, and no one in an organisation created it,
 * so its actors and dates are null.
 */
export const STANDARD_FLOW_KEY = 'STANDARD';
export const STANDARD_FLOW_VERSION = 1;

export const STANDARD_FLOW: ReminderFlowVersion = {
  key: STANDARD_FLOW_KEY,
  version: STANDARD_FLOW_VERSION,
  name: 'Statutory standard',
  graph: {
    steps: [
      { id: 'reminder_1', action: 'reminder', daysAfterDue: 7, fee: 'statutory', channel: 'email_or_letter' },
      { id: 'reminder_2', action: 'reminder', daysAfterDue: 14, fee: 'statutory', channel: 'email_or_letter' },
      { id: 'reminder_3', action: 'reminder', daysAfterDue: 21, fee: 'statutory', channel: 'email_or_letter' },
    ],
  },
  state: FLOW_LIFECYCLE.state.approved,
  createdBy: null,
  approvedBy: null,
  activatedBy: null,
  createdAt: null,
  approvedAt: null,
  activatedAt: null,
};

/** The standard flow with that key and version, if there is one. */
export const standardFlow = (key: string, version: number): ReminderFlowVersion | undefined =>
  key === STANDARD_FLOW_KEY && version === STANDARD_FLOW_VERSION ? STANDARD_FLOW : undefined;
