/**
 * Running text for the letters' templates (reminders, demand letters, a case's påkrav): sentences are built with their
 * unbreakable parts marked (dates, amounts, section references), then cut into pieces the template wraps in a span
 * that never breaks across lines.
 */

/** A piece of running text; `keep` pieces never break across lines. */
export type TextPiece = { text: string; keep: boolean };

const KEEP_OPEN = '\u0001';
const KEEP_CLOSE = '\u0002';

/** Marks a part of a sentence as unbreakable. */
export const keep = (s: string): string => `${KEEP_OPEN}${s}${KEEP_CLOSE}`;

/** A sentence built with `keep`, as the template's pieces. */
export function pieces(sentence: string): TextPiece[] {
  const out: TextPiece[] = [];
  for (const part of sentence.split(KEEP_OPEN)) {
    const [kept, rest] = part.includes(KEEP_CLOSE) ? part.split(KEEP_CLOSE) : [undefined, part];
    if (kept) out.push({ text: kept, keep: true });
    if (rest) out.push({ text: rest, keep: false });
  }
  return out;
}

/** The collection fee a hand-over adds (inkassogebyr, Renteloven § 9 b stk. 3), named in every collection warning. */
export { COLLECTION_FEE_OERE } from '../../services/law/danish-law.ts';
