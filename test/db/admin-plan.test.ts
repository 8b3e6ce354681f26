import assert from 'node:assert/strict';
import { testDb } from '../helpers/context.ts';
import { runScript, type Run } from '../helpers/scripts.ts';

/** The organisation's plan through the operator command, run as an operator runs it: its own process. */

function env(): NodeJS.ProcessEnv {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) throw new Error('TEST_DATABASE_URL is not set: run the tests through mocha (npm test)');
  return { ...process.env, DATABASE_URL: url };
}

const admin = (args: string[]): Promise<Run> => runScript('services/admin/cli.ts', args, env());

function jsonLine(r: Run): Record<string, unknown> {
  assert.equal(r.code, 0, `exit ${r.code}; stderr: ${r.stderr}`);
  assert.match(r.stdout, /^[^\n]+\n$/);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

function assertUsageError(r: Run, message: RegExp): void {
  assert.equal(r.code, 2, `exit ${r.code}; stderr: ${r.stderr}`);
  assert.equal(r.stdout, '');
  const [first, ...rest] = r.stderr.split('\n');
  assert.match(first!, message);
  assert.match(rest.join('\n'), /Usage: npm run admin -- /);
}

async function planOf(organizationId: string): Promise<string> {
  const [row] = await testDb().db.sql<{ plan: string }[]>`SELECT plan FROM organizations WHERE id = ${organizationId}`;
  return row!.plan;
}

async function organizationCount(): Promise<number> {
  const [row] = await testDb().db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM organizations`;
  return row!.n;
}

describe('operator command: the organisation plan', () => {
  it('create-org starts an organisation on the standard plan, or on pro with --plan pro', async () => {
    const standard = jsonLine(await admin(['create-org', '--name', 'Standard ApS', '--json']));
    assert.equal(await planOf(String(standard.organizationId)), 'standard');
    const pro = jsonLine(await admin(['create-org', '--name', 'Pro ApS', '--plan', 'pro', '--json']));
    assert.deepEqual(Object.keys(pro), ['organizationId', 'keyId', 'apiKey', 'scopes']);
    assert.equal(await planOf(String(pro.organizationId)), 'pro');
    const explicit = jsonLine(await admin(['create-org', '--name', 'Explicit ApS', '--plan', 'standard', '--json']));
    assert.equal(await planOf(String(explicit.organizationId)), 'standard');
  });

  it('create-org says the plan in its text output', async () => {
    const r = await admin(['create-org', '--name', 'Tekst ApS', '--plan', 'pro']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^Created live organization [0-9a-f-]{36} \(Tekst ApS\) on the pro plan\.\n/);
  });

  it('update-org --plan moves an organisation between standard and pro', async () => {
    const org = jsonLine(await admin(['create-org', '--name', 'Skifter ApS', '--json']));
    const id = String(org.organizationId);
    assert.deepEqual(jsonLine(await admin(['update-org', '--org', id, '--plan', 'pro', '--json'])), { organizationId: id, updated: true });
    assert.equal(await planOf(id), 'pro');
    const text = await admin(['update-org', '--org', id, '--plan', 'standard']);
    assert.equal(text.code, 0, text.stderr);
    assert.equal(text.stdout, `Updated organization ${id}: plan.\n`);
    assert.equal(await planOf(id), 'standard');
  });

  it('refuses an unknown plan with exit 2 and the usage, creating or changing nothing', async () => {
    const before = await organizationCount();
    assertUsageError(await admin(['create-org', '--name', 'X', '--plan', 'enterprise', '--json']), /^error: --plan must be one of standard, pro, got "enterprise"$/);
    assertUsageError(await admin(['create-org', '--name', 'X', '--plan', 'PRO']), /^error: --plan must be one of standard, pro, got "PRO"$/);
    assert.equal(await organizationCount(), before);
    const org = jsonLine(await admin(['create-org', '--name', 'Uændret ApS', '--json']));
    assertUsageError(await admin(['update-org', '--org', String(org.organizationId), '--plan', '']), /^error: --plan must be one of standard, pro/);
    assert.equal(await planOf(String(org.organizationId)), 'standard');
  });

  it('lists --plan in the usage of create-org and update-org', async () => {
    for (const command of ['create-org', 'update-org']) {
      const r = await admin([command, '--help']);
      assert.equal(r.code, 0);
      assert.match(r.stdout, /\[--plan standard\|pro\]/);
    }
  });
});
