/** The drill's verdicts, one per check, and their table for the terminal. */
import * as checks from './checks.ts';
import type { Kill, Verdict } from './checks.ts';
import type { Facts } from './facts.ts';
import type { LoadRecord } from './load.ts';

/** Every check, in the table's order; progress once per kill of a process that carries durable work. */
export function drillVerdicts(record: LoadRecord, facts: Facts, durableKills: readonly Kill[], limits: { silenceMs: number; progressMs: number }): Verdict[] {
  return [
    checks.checkPayments(record.acks, facts.booked, record.unanswered),
    checks.checkEvents(facts.committed, facts.deliveries),
    checks.checkReminders(facts.reminders, facts.overdueReminders, facts.mails),
    checks.checkCaseSteps(facts.cases, facts.handOvers, facts.mails),
    checks.checkSubscriptionPeriods(facts.subscriptions, facts.mails),
    checks.checkInvoiceMails(facts.sends, facts.mails),
    checks.checkNumberSeries(facts.series),
    checks.checkNothingLeft(facts.wakeRows),
    checks.checkRefusals(record.refused),
    checks.checkSilence(record.pings, record.from, record.to, limits.silenceMs),
    ...durableKills.map((k) => checks.checkProgress(k, facts.progress, limits.progressMs)),
  ];
}

const SHOWN_PROBLEMS = 10;

/** One row per check, then what did not hold, a few lines per failed check. */
export function formatVerdicts(verdicts: readonly Verdict[]): string {
  const head = ['check', 'measured', 'target', 'result'];
  const rows = verdicts.map((v) => [v.check, v.measured, v.target, v.ok ? 'ok' : 'FAILED']);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
  const lines = [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)];
  for (const v of verdicts.filter((x) => !x.ok)) {
    lines.push('', `${v.check}:`);
    for (const p of v.problems.slice(0, SHOWN_PROBLEMS)) lines.push(`  - ${p}`);
    if (v.problems.length > SHOWN_PROBLEMS) lines.push(`  … and ${v.problems.length - SHOWN_PROBLEMS} more`);
  }
  return lines.join('\n');
}
