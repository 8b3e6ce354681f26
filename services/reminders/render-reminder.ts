import { renderDocument, type RenderDocumentDeps } from '../documents/render-document.ts';
import type { Keyring } from '../shared/crypto.ts';
import { isUuid } from '../shared/ids.ts';
import { loadReminderView } from './reminder-document.ts';

export interface RenderReminderDeps extends RenderDocumentDeps {
  keyring: Keyring;
  /** The pay page's address (PAY_BASE_URL), to print the payment link's URL; without it only the payment code shows. */
  payBaseUrl?: string;
}

export type RenderReminderResult = { status: 'rendered' | 'exists' | 'unknown' };

/**
 * Renders and stores a reminder's PDF, once, after the step that took the reminder has committed. Idempotent like the
 * receipt (services/payments/render-receipt.ts): a reminder whose document exists is left as it is (`exists`), and of
 * two renders racing, the first to commit is the reminder's document and the other's PDF is never referenced.
 * Rendering happens outside any transaction; the document (write-once) and the pointer to it, with the language it
 * was written in, are committed together. A reminder that failed (no channel) gets its document too, for the history.
 */
export async function renderReminderDocument(deps: RenderReminderDeps, reminderId: string): Promise<RenderReminderResult> {
  if (!isUuid(reminderId)) return { status: 'unknown' };
  const [pending] = await deps.db.read((sql) => sql<{ organization_id: string; document_sha256: Buffer | null }[]>`
    SELECT organization_id, document_sha256 FROM reminders WHERE id = ${reminderId}`);
  if (!pending) return { status: 'unknown' };
  if (pending.document_sha256) return { status: 'exists' };
  const org = pending.organization_id;
  const view = await deps.db.read((sql) => loadReminderView(sql, deps.keyring, org, reminderId, { payBaseUrl: deps.payBaseUrl }));
  if (!view) return { status: 'unknown' };
  const { status } = await renderDocument(deps, org, 'reminder', view, (tx, sha256) => tx`
    UPDATE reminders SET document_sha256 = ${sha256}, language = ${view.language}
    WHERE organization_id = ${org} AND id = ${reminderId} AND document_sha256 IS NULL
    RETURNING 1`);
  return { status };
}
