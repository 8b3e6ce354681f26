import { renderDocument, type RenderDocumentDeps } from '../documents/render-document.ts';
import type { Keyring } from '../shared/crypto.ts';
import { isUuid } from '../shared/ids.ts';
import { loadReceiptView } from './receipt-document.ts';

export interface RenderReceiptDeps extends RenderDocumentDeps {
  keyring: Keyring;
}

export type ReceiptResult = { status: 'rendered' | 'exists' | 'unknown' };

/**
 * Renders and stores a payment's receipt, once. Idempotent, so the workflow may run it again after a crash and the
 * housekeeping loop may hand it on twice: a receipt that exists is left as it is (`exists`), and of two renders racing, the
 * first to commit is the receipt and the other's PDF is never referenced. Rendering happens outside any transaction;
 * the document and the pointer to it are committed together.
 */
export async function renderPaymentReceipt(deps: RenderReceiptDeps, paymentId: string): Promise<ReceiptResult> {
  if (!isUuid(paymentId)) return { status: 'unknown' };
  const [pending] = await deps.db.read((sql) => sql<{ document_sha256: Buffer | null }[]>`
    SELECT document_sha256 FROM payment_receipts WHERE payment_id = ${paymentId}`);
  if (!pending) return { status: 'unknown' };
  if (pending.document_sha256) return { status: 'exists' };
  const loaded = await deps.db.read((sql) => loadReceiptView(sql, deps.keyring, paymentId));
  if (!loaded) return { status: 'unknown' };
  const { status } = await renderDocument(deps, loaded.organizationId, 'receipt', loaded.view, (tx, sha256) => tx`
    UPDATE payment_receipts SET document_sha256 = ${sha256}, language = ${loaded.view.language}, rendered_at = now()
    WHERE payment_id = ${paymentId} AND document_sha256 IS NULL
    RETURNING 1`);
  return { status };
}
