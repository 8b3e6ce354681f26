/** The drill's table for the terminal: one row per check, then what did not hold, a few lines per failed check. */
import type { Verdict } from './checks.ts';

const SHOWN_PROBLEMS = 10;

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
