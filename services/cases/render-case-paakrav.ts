import { renderDocument, type RenderDocumentDeps } from '../documents/render-document.ts';
import type { Keyring } from '../shared/crypto.ts';
import { loadCasePaakravView } from './case-paakrav-document.ts';

export interface RenderCasePaakravDeps extends RenderDocumentDeps {
  keyring: Keyring;
}

/**
 * Renders a case's own påkrav (services/cases/case-paakrav-document.ts) dated `sentOn` and stores the PDF in the
 * write-once document store; answers its SHA-256 (hex), which the case workflow journals and hands to the delivery
 * (activities/collections/deliver-case-paakrav.ts). Rendering happens outside any transaction.
 *
 * Idempotent as far as bytes allow: the store addresses documents by their hash, so a second put of the same bytes
 * is the same document (the PostgreSQL store checks it is this organisation's, with this content type, and succeeds).
 * A PDF carries its creation time, so rendering again makes other bytes: the workflow runs this as one journaled
 * step and a retry after a crash may leave one earlier document unreferenced, never a wrong one. An unknown case (or
 * one whose invoice is not issued) is an Error: the workflow only renders for a case it holds.
 */
export async function renderCasePaakrav(
  deps: RenderCasePaakravDeps,
  organizationId: string,
  caseId: string,
  sentOn: string,
): Promise<{ sha256: string }> {
  const view = await deps.db.read((sql) => loadCasePaakravView(sql, deps.keyring, organizationId, caseId, sentOn));
  if (!view) throw new Error(`case ${caseId} of organisation ${organizationId} has no påkrav to render`);
  const { sha256 } = await renderDocument(deps, organizationId, 'casePaakrav', view);
  return { sha256: sha256.toString('hex') };
}
