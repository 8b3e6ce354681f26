/**
 * The production letter service: a print-and-post provider's HTTP API (LETTER_API_URL). One JSON POST per letter,
 * authorised with `Authorization: Bearer LETTER_API_KEY`, carrying the PDF as base64 and the letter's id as
 * `Idempotency-Key`, so a retried send (after a crash or a timeout whose request did arrive) is the same letter to the
 * provider, never a second one.
 *
 * What an answer means is the one reading of activities/http/idempotent-post.ts: a refusal for good is a DomainError
 * `letter_rejected`. The key is never logged, nor is the recipient's address.
 */
import { createIdempotentPost } from '../http/idempotent-post.ts';
import type { Letter, LetterLog, LetterService } from '../../services/letters/letter-port.ts';

/** How long one POST may take, up to the whole response. */
export const LETTER_TIMEOUT_MS = 15_000;

export interface HttpLetterOptions {
  url: string;
  apiKey: string;
  log: LetterLog;
  /** Tests shorten it. */
  timeoutMs?: number;
}

/** The request body the provider receives. */
export interface LetterRequestBody {
  id: string;
  organizationId: string;
  documentSha256: string;
  /** The PDF, base64. */
  pdf: string;
  recipient: Letter['recipient'];
  sender: Letter['sender'];
}

export function createHttpLetterService(opts: HttpLetterOptions): LetterService {
  const post = createIdempotentPost({
    url: opts.url,
    partner: 'letter service',
    what: 'letter',
    takenLog: 'letter handed to the letter service',
    rejectedCode: 'letter_rejected',
    keyField: 'letterId',
    referenceFields: ['reference', 'id'],
    log: opts.log,
    timeoutMs: opts.timeoutMs ?? LETTER_TIMEOUT_MS,
  });
  return {
    send(letter) {
      const { id, organizationId, documentSha256, recipient, sender } = letter;
      const body: LetterRequestBody = { id, organizationId, documentSha256, pdf: letter.pdf.toString('base64'), recipient, sender };
      return post(id, { authorization: `Bearer ${opts.apiKey}` }, JSON.stringify(body), { organizationId });
    },
  };
}
