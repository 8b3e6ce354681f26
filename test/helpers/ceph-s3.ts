import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startCephS3, type RunningCephS3 } from '../../deploy/local/ceph-s3.ts';

/**
 * A Ceph cluster of its own (monitor, in-memory OSD, radosgw) in a temp directory, removed on stop: the real S3
 * server with Object Lock the archive's tests write to. Starting one takes about 20 s.
 */
export async function startTestCephS3(): Promise<RunningCephS3> {
  const dir = mkdtempSync(join(tmpdir(), 'faktura-test-ceph-'));
  let server: RunningCephS3;
  try {
    server = await startCephS3({ dataDir: dir });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    ...server,
    async stop(timeoutMs?: number) {
      try {
        await server.stop(timeoutMs);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
