import assert from 'node:assert/strict';
import { readConfig } from '../../services/shared/config.ts';

/** DOCUMENT_STORE and the archive's S3 settings, as the services read them at start. */
describe('document store configuration', () => {
  it('keeps documents in PostgreSQL unless told otherwise', () => {
    const c = readConfig({});
    assert.deepEqual([c.documentStore, c.s3Endpoint, c.s3Bucket, c.s3Region], ['postgres', undefined, undefined, 'us-east-1']);
  });

  it('reads the archive settings with DOCUMENT_STORE=s3', () => {
    const c = readConfig({ DOCUMENT_STORE: 's3', S3_ENDPOINT: 'http://127.0.0.1:7480/', S3_BUCKET: 'faktura-documents', S3_REGION: 'eu-north-1' });
    assert.deepEqual([c.documentStore, c.s3Endpoint, c.s3Bucket, c.s3Region], ['s3', 'http://127.0.0.1:7480', 'faktura-documents', 'eu-north-1']);
  });

  it('refuses an archive without its bucket, an unknown store and an endpoint that is not an http(s) URL', () => {
    assert.throws(() => readConfig({ DOCUMENT_STORE: 's3' }), /S3_BUCKET must be set with DOCUMENT_STORE=s3/);
    assert.throws(() => readConfig({ DOCUMENT_STORE: 'disk' }), /DOCUMENT_STORE must be postgres or s3, got "disk"/);
    assert.throws(() => readConfig({ DOCUMENT_STORE: 's3', S3_BUCKET: 'b', S3_ENDPOINT: 'ftp://x' }), /S3_ENDPOINT must be an http\(s\) URL/);
  });
});
