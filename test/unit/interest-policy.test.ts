import assert from 'node:assert/strict';
import { halfYearOf, nextHalfYear, statutoryRateBp } from '../../services/law/danish-law.ts';
import { halfYearsBetween, interestPieces, referenceRateFor, type InterestFacts, type ReferenceRate } from '../../services/reminders/interest-policy.ts';

/**
 * Late-payment interest from tables, each row with its hand calculation: principal × (reference + 8 pp) × days / 365,
 * per half-year piece, rounded half up to whole øre.
 */
describe('interest policy (renteloven §§ 3 and 5)', () => {
  const RATES: ReferenceRate[] = [
    { from: '2024-01-01', referenceRateBp: 375 }, // statutory 11.75 %
    { from: '2024-07-01', referenceRateBp: 350 }, // 11.50 %
    { from: '2025-01-01', referenceRateBp: 275 }, // 10.75 %
    { from: '2025-07-01', referenceRateBp: 175 }, // 9.75 %
    { from: '2026-01-01', referenceRateBp: 175 }, // 9.75 %
  ];
  const facts = (f: Partial<InterestFacts>): InterestFacts => ({ dueDate: '2025-01-31', grossOere: 100_000, reductions: [], postedThrough: null, ...f });

  const table: [why: string, f: InterestFacts, through: string, expected: ReturnType<typeof interestPieces>, rates?: ReferenceRate[]][] = [
    [
      '1 000 kr, 29 days of February–1 March 2025 at 10.75 %: 100 000 × 1075 × 29 / 3 650 000 = 854.11 → 854',
      facts({}), '2025-03-01',
      [{ fromDate: '2025-02-01', toDate: '2025-03-01', rateBp: 1075, rateFrom: '2025-01-01', amountOere: 854 }],
    ],
    [
      'a half-year boundary: 10 days at 10.75 % = 294.52 → 295, then 10 days at 9.75 % = 267.12 → 267, each rounded on its own',
      facts({ dueDate: '2025-06-20' }), '2025-07-10',
      [
        { fromDate: '2025-06-21', toDate: '2025-06-30', rateBp: 1075, rateFrom: '2025-01-01', amountOere: 295 },
        { fromDate: '2025-07-01', toDate: '2025-07-10', rateBp: 975, rateFrom: '2025-07-01', amountOere: 267 },
      ],
    ],
    [
      'a leap year divides by 365 too: 28 and 29 February and 1 March 2024 at 11.75 % = 352 500 000 / 3 650 000 = 96.58 → 97',
      facts({ dueDate: '2024-02-27' }), '2024-03-01',
      [{ fromDate: '2024-02-28', toDate: '2024-03-01', rateBp: 1175, rateFrom: '2024-01-01', amountOere: 97 }],
    ],
    [
      'a payment of 400 kr dated 10 February: 10 days on 1 000 kr, 10 on 600 kr: 1075 × 1 600 000 / 3 650 000 = 471.23 → 471',
      facts({ reductions: [{ date: '2025-02-10', amountOere: 40_000 }] }), '2025-02-20',
      [{ fromDate: '2025-02-01', toDate: '2025-02-20', rateBp: 1075, rateFrom: '2025-01-01', amountOere: 471 }],
    ],
    [
      'a credit note for the whole dated 5 February ends accrual: 5 days = 147.26 → 147, the piece ends on the 5th',
      facts({ reductions: [{ date: '2025-02-05', amountOere: 100_000 }] }), '2025-02-20',
      [{ fromDate: '2025-02-01', toDate: '2025-02-05', rateBp: 1075, rateFrom: '2025-01-01', amountOere: 147 }],
    ],
    [
      'an overpayment never makes interest negative: nothing accrues after it',
      facts({ reductions: [{ date: '2025-01-31', amountOere: 150_000 }] }), '2025-02-20',
      [],
    ],
    [
      'from the day after the previous posting: 11–20 February on 1 000 kr = 10 days = 294.52 → 295',
      facts({ postedThrough: '2025-02-10' }), '2025-02-20',
      [{ fromDate: '2025-02-11', toDate: '2025-02-20', rateBp: 1075, rateFrom: '2025-01-01', amountOere: 295 }],
    ],
    [
      'time-barred on 31 January 2027: the days up to 30 January accrue (10 days at 9.75 %, the latest earlier rate = 267.12 → 267), none after',
      facts({ dueDate: '2024-01-31', postedThrough: '2027-01-20' }), '2027-03-01',
      [{ fromDate: '2027-01-21', toDate: '2027-01-30', rateBp: 975, rateFrom: '2026-01-01', amountOere: 267 }],
    ],
    ['nothing after the limitation date', facts({ dueDate: '2024-01-31', postedThrough: '2027-01-30' }), '2027-03-01', []],
    ['nothing on or before the due date', facts({}), '2025-01-31', []],
    [
      'half an øre rounds up: 18.25 kr × 10 % for 1 day = 1 825 × 1000 / 3 650 000 = 0.5 → 1',
      facts({ grossOere: 1825 }), '2025-02-01', [{ fromDate: '2025-02-01', toDate: '2025-02-01', rateBp: 1000, rateFrom: '2025-01-01', amountOere: 1 }],
      [{ from: '2025-01-01', referenceRateBp: 200 }],
    ],
    ['just under half an øre is 0, and 0 is not posted: 1 824 × 1000 / 3 650 000 = 0.4997', facts({ grossOere: 1824 }), '2025-02-01', [], [{ from: '2025-01-01', referenceRateBp: 200 }]],
    [
      'a waiver (plan active with waiveInterest) from 6 to 15 February: 1–5 and 16–20 accrue, 10 days = 295',
      facts({ waived: [{ from: '2025-02-06', to: '2025-02-15' }] }), '2025-02-20',
      [{ fromDate: '2025-02-01', toDate: '2025-02-20', rateBp: 1075, rateFrom: '2025-01-01', amountOere: 295 }],
    ],
    ['a half-year before any known rate does not accrue', facts({ dueDate: '2023-12-20' }), '2023-12-31', []],
  ];
  for (const [why, f, through, expected, rates] of table) {
    it(why, () => assert.deepEqual(interestPieces(f, rates ?? RATES, through), expected));
  }

  it('reads the rate of a half-year, else the latest earlier; the statutory rate is reference + 800 bp', () => {
    assert.equal(referenceRateFor(RATES, '2025-07-01')?.referenceRateBp, 175);
    assert.equal(referenceRateFor(RATES, '2027-07-01')?.from, '2026-01-01');
    assert.equal(referenceRateFor(RATES, '2023-07-01'), null);
    assert.equal(statutoryRateBp(160), 960);
  });

  it('half-years: the one containing a date, the next, and those a span touches', () => {
    assert.deepEqual(['2025-01-01', '2025-06-30', '2025-07-01', '2025-12-31'].map(halfYearOf), ['2025-01-01', '2025-01-01', '2025-07-01', '2025-07-01']);
    assert.deepEqual([nextHalfYear('2025-01-01'), nextHalfYear('2025-07-01')], ['2025-07-01', '2026-01-01']);
    assert.deepEqual(halfYearsBetween('2025-05-10', '2026-02-01'), ['2025-01-01', '2025-07-01', '2026-01-01']);
  });

  it('posting in several steps never gives more than the rounding of each piece: the sum of two postings is the whole ± 1 øre per piece', () => {
    const whole = interestPieces(facts({}), RATES, '2025-03-31').reduce((s, p) => s + p.amountOere, 0);
    const a = interestPieces(facts({}), RATES, '2025-02-15').reduce((s, p) => s + p.amountOere, 0);
    const b = interestPieces(facts({ postedThrough: '2025-02-15' }), RATES, '2025-03-31').reduce((s, p) => s + p.amountOere, 0);
    assert.ok(Math.abs(a + b - whole) <= 1, `${a} + ${b} vs ${whole}`);
  });
});
