import type { ReminderFlowGraph, ReminderFlowStep } from '../../contracts/reminder-flows.ts';
import { HAND_OVER_AFTER_DAYS, MAX_NUMBERED_REMINDERS, STATUTORY_FEE_OERE } from '../law/danish-law.ts';
import { DomainError, type ErrorDetail } from '../shared/errors.ts';

/**
 * Judges a flow graph (docs/reminder-flows.md, "The graph") and reports EVERY rule it
 * breaks, one detail per problem, each at a JSON pointer from the request body's root (`/graph/steps/2/daysAfterDue`).
 * The shape first (types, bounds, unknown keys), then the rules across steps, which are judged on the steps whose
 * own fields are valid, once per customer type (a step without `when.customerType` counts for both):
 *
 * - ids unique (the later duplicate is reported); `daysAfterDue` strictly increasing (the step not after its
 *   predecessor is reported); a `fee` on a `payment_reminder` or `collections` step is an error;
 * - per customer type: at most one `payment_reminder`, and it comes before any `reminder`; at most 3 `reminder`
 *   steps (the fourth is reported); `collections` at most once, last, and at least 11 days after the last reminder.
 *
 * A problem that holds for both customer types is reported once.
 */

const ACTIONS = ['payment_reminder', 'reminder', 'collections'] as const;
const CHANNELS = ['email', 'letter', 'email_or_letter'] as const;
const CUSTOMER_TYPES = ['person', 'company'] as const;
const STEP_KEYS = new Set(['id', 'action', 'daysAfterDue', 'fee', 'channel', 'when']);
const WHEN_KEYS = new Set(['customerType']);
export const MAX_STEPS = 10;
export const MAX_REMINDERS = MAX_NUMBERED_REMINDERS;
/** Collections come at least this many days after the last reminder step: the demand letter's deadline, then one. */
export const COLLECTIONS_GAP_DAYS = HAND_OVER_AFTER_DAYS;

type Action = (typeof ACTIONS)[number];
type CustomerType = (typeof CUSTOMER_TYPES)[number];

/** JSON Pointer escaping of one reference token (RFC 6901). */
const token = (s: string): string => s.replace(/~/g, '~0').replace(/\//g, '~1');
const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const isIntIn = (v: unknown, min: number, max: number): v is number => typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;
const describe = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v);

/** A step as far as its own fields are valid: undefined where a field is missing or wrong. */
interface ParsedStep {
  index: number;
  id?: string;
  action?: Action;
  daysAfterDue?: number;
  /** The step's customer type, null for every customer; undefined when `when` is invalid. */
  customerType?: CustomerType | null;
}

export function flowGraphProblems(graph: unknown, base = '/graph'): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  const add = (path: string, message: string) => {
    if (!problems.some((p) => p.path === path && p.message === message)) problems.push({ path, message });
  };
  if (!isObject(graph)) {
    add(base, `must be an object with "steps", got ${describe(graph)}`);
    return problems;
  }
  for (const k of Object.keys(graph)) if (k !== 'steps') add(`${base}/${token(k)}`, 'is not allowed');
  const stepsPath = `${base}/steps`;
  const steps = graph.steps;
  if (steps === undefined) {
    add(stepsPath, 'is required');
    return problems;
  }
  if (!Array.isArray(steps)) {
    add(stepsPath, `must be an array of steps, got ${describe(steps)}`);
    return problems;
  }
  if (steps.length < 1 || steps.length > MAX_STEPS) add(stepsPath, `must have 1 to ${MAX_STEPS} steps, has ${steps.length}`);

  const parsed: ParsedStep[] = steps.map((raw, index) => parseStep(raw, `${stepsPath}/${index}`, index, add));

  // Across steps, whatever the customer type: unique ids, strictly increasing days.
  const seen = new Set<string>();
  let previousDays: number | undefined;
  for (const s of parsed) {
    const at = `${stepsPath}/${s.index}`;
    if (s.id !== undefined) {
      if (seen.has(s.id)) add(`${at}/id`, `must be unique: "${s.id}" is used by an earlier step`);
      seen.add(s.id);
    }
    if (s.daysAfterDue !== undefined) {
      if (previousDays !== undefined && s.daysAfterDue <= previousDays) {
        add(`${at}/daysAfterDue`, `must be greater than the previous step's daysAfterDue (${previousDays})`);
      }
      previousDays = s.daysAfterDue;
    }
  }

  // Per customer type: the steps that apply to it, in order.
  const perType = new Map<string, { path: string; rule: string; types: CustomerType[] }>();
  const addForType = (path: string, rule: string, type: CustomerType) => {
    const k = `${path}\u0000${rule}`;
    const entry = perType.get(k) ?? { path, rule, types: [] };
    entry.types.push(type);
    perType.set(k, entry);
  };
  for (const type of CUSTOMER_TYPES) {
    const applies = parsed.filter((s) => s.action !== undefined && s.customerType !== undefined && (s.customerType === null || s.customerType === type));
    let paymentReminders = 0;
    let reminders = 0;
    let lastReminderDays: number | undefined;
    let collections: ParsedStep | undefined;
    for (const s of applies) {
      const at = `${stepsPath}/${s.index}`;
      if (collections !== undefined) addForType(`${stepsPath}/${collections.index}/action`, 'collections must be the last step', type);
      if (s.action === 'payment_reminder') {
        paymentReminders++;
        if (paymentReminders > 1) addForType(`${at}/action`, 'at most one payment_reminder', type);
        if (reminders > 0) addForType(`${at}/action`, 'the payment_reminder must come before any reminder', type);
      } else if (s.action === 'reminder') {
        reminders++;
        if (reminders > MAX_REMINDERS) addForType(`${at}/action`, `at most ${MAX_REMINDERS} reminder steps`, type);
        // A reminder after collections is reported as such; the gap is measured from the reminders before it.
        if (s.daysAfterDue !== undefined && collections === undefined) lastReminderDays = s.daysAfterDue;
      } else if (collections !== undefined) {
        addForType(`${at}/action`, 'at most one collections step', type);
      } else {
        collections = s;
      }
    }
    if (collections?.daysAfterDue !== undefined && lastReminderDays !== undefined && collections.daysAfterDue - lastReminderDays < COLLECTIONS_GAP_DAYS) {
      addForType(
        `${stepsPath}/${collections.index}/daysAfterDue`,
        `collections must come at least ${COLLECTIONS_GAP_DAYS} days after the last reminder step (day ${lastReminderDays}), so no earlier than day ${lastReminderDays + COLLECTIONS_GAP_DAYS}`,
        type,
      );
    }
  }
  for (const { path, rule, types } of perType.values()) {
    add(path, types.length === CUSTOMER_TYPES.length ? rule : `${rule} (for ${types[0]} customers)`);
  }
  problems.sort((a, b) => comparePaths(a.path, b.path));
  return problems;
}

/** Document order of pointers: numeric tokens by value, so /steps/10 comes after /steps/2. */
function comparePaths(a: string, b: string): number {
  const x = a.split('/');
  const y = b.split('/');
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] === y[i]) continue;
    const nx = /^\d+$/.test(x[i]!) ? Number(x[i]) : NaN;
    const ny = /^\d+$/.test(y[i]!) ? Number(y[i]) : NaN;
    if (!Number.isNaN(nx) && !Number.isNaN(ny)) return nx - ny;
    return 0; // Keys of one step keep the order in which they were found.
  }
  return x.length - y.length;
}

function parseStep(raw: unknown, at: string, index: number, add: (path: string, message: string) => void): ParsedStep {
  const step: ParsedStep = { index };
  if (!isObject(raw)) {
    add(at, `must be a step object, got ${describe(raw)}`);
    return step;
  }
  for (const k of Object.keys(raw)) if (!STEP_KEYS.has(k)) add(`${at}/${token(k)}`, 'is not allowed');

  if (raw.id === undefined) add(`${at}/id`, 'is required');
  else if (typeof raw.id !== 'string' || [...raw.id].length < 1 || [...raw.id].length > 40) add(`${at}/id`, 'must be a string of 1 to 40 characters');
  else step.id = raw.id;

  if (raw.action === undefined) add(`${at}/action`, 'is required');
  else if (!(ACTIONS as readonly unknown[]).includes(raw.action)) add(`${at}/action`, `must be one of ${ACTIONS.join(', ')}`);
  else step.action = raw.action as Action;

  if (raw.daysAfterDue === undefined) add(`${at}/daysAfterDue`, 'is required');
  else if (!isIntIn(raw.daysAfterDue, 1, 365)) add(`${at}/daysAfterDue`, 'must be a whole number of days from 1 to 365');
  else step.daysAfterDue = raw.daysAfterDue;

  if (raw.fee !== undefined) {
    if (step.action !== undefined && step.action !== 'reminder') add(`${at}/fee`, `is allowed on reminder steps only, not on ${step.action}`);
    else if (raw.fee !== 'statutory' && !isIntIn(raw.fee, 0, STATUTORY_FEE_OERE)) add(`${at}/fee`, `must be "statutory" or a whole number of øre from 0 to ${STATUTORY_FEE_OERE}`);
  }

  if (raw.channel !== undefined && !(CHANNELS as readonly unknown[]).includes(raw.channel)) add(`${at}/channel`, `must be one of ${CHANNELS.join(', ')}`);

  if (raw.when === undefined) step.customerType = null;
  else if (!isObject(raw.when)) add(`${at}/when`, `must be an object, got ${describe(raw.when)}`);
  else {
    let ok = true;
    for (const k of Object.keys(raw.when)) {
      if (!WHEN_KEYS.has(k)) {
        add(`${at}/when/${token(k)}`, 'is not allowed');
        ok = false;
      }
    }
    const ct = raw.when.customerType;
    if (ct !== undefined && !(CUSTOMER_TYPES as readonly unknown[]).includes(ct)) {
      add(`${at}/when/customerType`, `must be one of ${CUSTOMER_TYPES.join(', ')}`);
      ok = false;
    }
    if (ok) step.customerType = (ct as CustomerType | undefined) ?? null;
  }
  return step;
}

/** The graph with its defaults filled in, in a fixed key order: what is stored and read back. */
function normalise(graph: ReminderFlowGraph): ReminderFlowGraph {
  return {
    steps: graph.steps.map((s) => {
      const out: ReminderFlowStep = { id: s.id, action: s.action, daysAfterDue: s.daysAfterDue };
      if (s.action === 'reminder') out.fee = s.fee ?? 'statutory';
      out.channel = s.channel ?? 'email_or_letter';
      if (s.when !== undefined) out.when = s.when.customerType === undefined ? {} : { customerType: s.when.customerType };
      return out;
    }),
  };
}

/** The graph, valid and normalised; otherwise 422 `invalid_flow_graph` with every problem in `details`. */
export function validateFlowGraph(graph: unknown): ReminderFlowGraph {
  const problems = flowGraphProblems(graph);
  if (problems.length > 0) {
    throw new DomainError(
      'invalid_flow_graph',
      `The flow graph breaks ${problems.length === 1 ? 'a rule' : `${problems.length} rules`}; see details.`,
      { details: problems },
    );
  }
  return normalise(graph as ReminderFlowGraph);
}
