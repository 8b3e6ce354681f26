-- Documents kept in an S3 bucket with Object Lock (DOCUMENT_STORE=s3, docs/operations.md "Document archive"): the
-- bytes live in the bucket, the row stays here as the index the issuing transaction writes, so that a read knows the
-- content type, size and the exact object version to fetch. Rows of the PostgreSQL store keep their content; an s3 row
-- has none, and names the locked version and the date its retention ends. The write-once triggers of migration 002
-- keep guarding both kinds.
ALTER TABLE documents ALTER COLUMN content DROP NOT NULL;
ALTER TABLE documents ADD COLUMN storage text NOT NULL DEFAULT 'postgres' CHECK (storage IN ('postgres', 's3'));
-- The last day of the retention period (31 December, five years after the document's financial year).
ALTER TABLE documents ADD COLUMN retain_until date;
-- The object's VersionId in the bucket: reads fetch exactly the version that was locked, never a later one.
ALTER TABLE documents ADD COLUMN object_version text;
ALTER TABLE documents ADD CONSTRAINT documents_storage_shape CHECK (
  (storage = 'postgres' AND content IS NOT NULL)
  OR (storage = 's3' AND content IS NULL AND retain_until IS NOT NULL AND object_version IS NOT NULL)
);

-- The collection hand-over is a document like the others: the bytes the partner receives are kept in the document
-- store before they are sent, and the case names the last one handed over.
ALTER TABLE collection_cases ADD COLUMN hand_over_document_sha256 bytea CHECK (length(hand_over_document_sha256) = 32);
