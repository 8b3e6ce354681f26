import { recordDocumentDelivery } from '../observability/metrics.ts';
import { sendDocument, type ChannelOutcome, type Channels, type Outbound, type Recipient, type Refused } from './channels.ts';

/**
 * A kind of outbound document as the deliverer sees it: what its record says now (`settled`: nothing to send, and
 * the answer to journal), whom it goes to (or why nobody can take it), the document on each channel, and the journaled
 * answer of what the channel did. A new kind supplies these four; a new channel is a new branch of `sendDocument`.
 */
export interface DocumentKind<Deps extends Channels, Ready, Answer, Id = string> {
  prepare(deps: Deps, id: Id): Promise<{ settled: Answer } | { ready: Ready }>;
  recipient(ready: Ready): Recipient | Refused;
  outbound(ready: Ready, deps: Deps, id: Id): Outbound;
  answer(outcome: ChannelOutcome, ready: Ready): Answer;
}

/** Step 1 of every delivery (workflows/shared/dispatch.ts `deliver`): hands the document over and writes nothing. */
export async function deliverDocument<Deps extends Channels, Ready, Answer, Id>(kind: DocumentKind<Deps, Ready, Answer, Id>, deps: Deps, id: Id): Promise<Answer> {
  const prepared = await kind.prepare(deps, id);
  if ('settled' in prepared) return prepared.settled;
  const to = kind.recipient(prepared.ready);
  // Nobody to send it to is an outcome too (channel `none`); a channel's outcomes count in sendDocument.
  if ('kind' in to) recordDocumentDelivery('none', 'refused');
  const outcome = 'kind' in to ? to : await sendDocument(deps, to, kind.outbound(prepared.ready, deps, id));
  return kind.answer(outcome, prepared.ready);
}
