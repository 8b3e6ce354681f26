import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFileMailer } from '../../activities/mail/file-mailer.ts';
import type { ActivityResources } from '../../workflows/main.ts';
import { testDb, testRenderer } from './context.ts';

/** Resources for workflow tests that do not look at mail: the test keyring, an .eml mailer in a temp dir, the shared renderer. */
export function testActivityResources(): ActivityResources {
  return { keyring: testDb().keyring, mailer: createFileMailer(mkdtempSync(join(tmpdir(), 'faktura-test-mail-')), () => {}), pdf: testRenderer() };
}
