import type { PendingQuery, Row } from 'postgres';
import type { Db, Tx } from '../shared/db.ts';
import type { DocumentStore } from './document-store.ts';
import type { DocumentKind, DocumentViews, PdfRenderer } from './pdf-renderer.ts';

export interface RenderDocumentDeps {
  db: Db;
  pdf: PdfRenderer;
  documents: DocumentStore;
}

/**
 * The render step of every outbound document (workflows/shared/dispatch.ts): renders the kind's view outside any
 * transaction, then stores the PDF in the write-once document store and, in the same transaction, points its record
 * at it (`attach`, a guarded UPDATE that returns a row only when the record had no document yet). Of two renders
 * racing, the first to commit is the record's document and the other's PDF is never referenced: `exists`.
 */
export async function renderDocument<K extends DocumentKind>(
  deps: RenderDocumentDeps,
  organizationId: string,
  kind: K,
  view: DocumentViews[K],
  attach?: (tx: Tx, sha256: Buffer) => PendingQuery<Row[]>,
): Promise<{ status: 'rendered' | 'exists'; sha256: Buffer }> {
  const bytes = await deps.pdf.render(kind, view);
  return deps.db.tx(async (tx) => {
    const stored = await deps.documents.put(tx, { organizationId, contentType: 'application/pdf', bytes });
    const attached = attach ? (await attach(tx, stored.sha256)).length === 1 : true;
    return { status: attached ? 'rendered' : 'exists', sha256: stored.sha256 };
  });
}
