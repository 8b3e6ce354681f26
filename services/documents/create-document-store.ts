import { S3Client } from '@aws-sdk/client-s3';
import type { Config } from '../shared/config.ts';
import type { DocumentStore } from './document-store.ts';
import { createPostgresDocumentStore } from './postgres-document-store.ts';
import { createS3DocumentStore } from './s3-document-store.ts';

/**
 * The document store the configuration names: the `documents` table (default), or the S3 archive with Object Lock.
 * The S3 client takes its credentials where the AWS SDK always looks (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY,
 * or the SDK's other sources); they are never part of Config, so never logged.
 */
export function createDocumentStore(config: Pick<Config, 'documentStore' | 's3Endpoint' | 's3Bucket' | 's3Region'>): DocumentStore {
  if (config.documentStore === 'postgres') return createPostgresDocumentStore();
  const client = new S3Client({
    region: config.s3Region,
    ...(config.s3Endpoint ? { endpoint: config.s3Endpoint, forcePathStyle: true } : {}),
  });
  return createS3DocumentStore({ client, bucket: config.s3Bucket! });
}
