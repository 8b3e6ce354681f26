import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../helpers/scripts.ts';

/**
 * The sample `npm run test:cluster` runs against the production shape (docs/contributing.md, "Against the cluster"):
 * the tests whose title carries @cluster. Every HTTP test file contributes to it, and so does every end-to-end file
 * that reaches the service through the test helpers, except those listed here with the reason.
 */
const E2E_NOT_ON_CLUSTER: Record<string, string> = {
  'customer-portal.test.ts': 'its scenario runs an engine and an SMTP server of its own and reads the mails from that server',
};

const TAG = /\b(?:it|describe)\((['"`])(?:(?!\1)[^\\]|\\.)*@cluster(?:(?!\1)[^\\]|\\.)*\1/;

const files = (dir: string) => readdirSync(join(ROOT, dir)).filter((f) => f.endsWith('.test.ts')).sort();

describe('the test:cluster sample', () => {
  it('takes at least one test of every HTTP test file', () => {
    const missing = files('test/http').filter((f) => !TAG.test(readFileSync(join(ROOT, 'test/http', f), 'utf8')));
    assert.deepEqual(missing, [], 'tag at least one test of each file @cluster (one that needs no in-process override)');
  });

  it('takes a test of every end-to-end file that reaches the service through the test helpers, but the listed ones', () => {
    const throughHelpers = files('test/e2e').filter((f) => /\b(startTestApp|startTestPay|startScenario)\(/.test(readFileSync(join(ROOT, 'test/e2e', f), 'utf8')));
    const missing = throughHelpers.filter((f) => !(f in E2E_NOT_ON_CLUSTER) && !TAG.test(readFileSync(join(ROOT, 'test/e2e', f), 'utf8')));
    assert.deepEqual(missing, []);
    for (const f of Object.keys(E2E_NOT_ON_CLUSTER)) assert.ok(throughHelpers.includes(f), `${f} is listed but reaches the service otherwise, or is gone`);
  });
});
