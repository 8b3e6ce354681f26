import { setReferenceRate } from '../interest/reference-rates.ts';
import { statutoryRateBp } from '../law/danish-law.ts';
import { OperatorError, UsageError, type Command, type Flags } from './commands.ts';

/** The reference rates late-payment interest is computed from (docs/reminders.md, "Interest"). */

function requiredFlag(flags: Flags, name: string): string {
  const raw = flags.get(name);
  if (raw === undefined || raw === true) throw new UsageError(`--${name} is required`);
  return String(raw).trim();
}

/** `--from`: the first day of a half-year, 1 January or 1 July (renteloven § 5 stk. 2). */
function halfYearFlag(flags: Flags): string {
  const value = requiredFlag(flags, 'from');
  const m = /^([0-9]{4})-(01|07)-01$/.exec(value);
  if (!m || m[1]! < '1900') throw new UsageError(`--from must be 1 January or 1 July of a year (YYYY-01-01 or YYYY-07-01), got "${value}"`);
  return value;
}

/** `--rate`: percent with at most two decimals, 0.00 to 20.00, as basis points. */
function rateFlag(flags: Flags): number {
  const value = requiredFlag(flags, 'rate');
  const m = /^([0-9]{1,2})(?:\.([0-9]{1,2}))?$/.exec(value);
  const bp = m ? Number(m[1]) * 100 + Number((m[2] ?? '').padEnd(2, '0')) : NaN;
  if (!m || bp > 2000) throw new UsageError(`--rate must be a percentage from 0.00 to 20.00 with at most two decimals, got "${value}"`);
  return bp;
}

const percent = (bp: number): string => `${Math.floor(bp / 100)}.${String(bp % 100).padStart(2, '0')}`;

export const setReferenceRateCommand: Command = {
  summary: "Set Nationalbanken's reference rate for a half-year; replacing one is refused once interest has been posted at it.",
  synopsis: '--from YYYY-01-01|YYYY-07-01 --rate PERCENT [--json]',
  flags: { from: 'string', rate: 'string' },
  prepare(flags) {
    const from = halfYearFlag(flags);
    const referenceRateBp = rateFlag(flags);
    return async (db) => {
      const result = await db.tx((tx) => setReferenceRate(tx, from, referenceRateBp));
      if (result.outcome === 'charged') {
        throw new OperatorError(
          `The reference rate from ${from} (${percent(result.previousBp)} %) has been charged with in ${result.postings} interest posting(s); it cannot be replaced.`,
        );
      }
      const statutory = statutoryRateBp(referenceRateBp);
      return {
        json: { from, referenceRateBp, statutoryRateBp: statutory, outcome: result.outcome, previousReferenceRateBp: result.previousBp },
        text:
          `Reference rate from ${from}: ${percent(referenceRateBp)} % (statutory interest ${percent(statutory)} %)` +
          (result.outcome === 'replaced' ? `, replacing ${percent(result.previousBp!)} %.` : result.outcome === 'unchanged' ? ', unchanged.' : ', added.'),
      };
    };
  },
};
