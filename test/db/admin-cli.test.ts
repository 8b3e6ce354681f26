import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { SCOPES } from '../../contracts/scopes.ts';
import { ApiKeyCache, listenForKeyChanges } from '../../services/api/plugins/auth.ts';
import { noDatabaseMessage } from '../../services/admin/database-url.ts';
import { sha256 } from '../../services/shared/crypto.ts';
import { call, startTestApp, testDb } from '../helpers/context.ts';
import { runScript, type Run } from '../helpers/scripts.ts';

/** The operator command as an operator runs it: a separate process, judged by its stdout, stderr and exit code. */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const MIGRATIONS = readdirSync(join(ROOT, 'services/db/migrations')).filter((f) => /^\d+_.+\.sql$/.test(f)).sort();


function testDatabaseUrl(): string {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) throw new Error('TEST_DATABASE_URL is not set: run the tests through mocha (npm test)');
  return url;
}

/** The environment of the tests' process, with the database the CLI is to use (or none). */
function envWith(databaseUrl: string | undefined, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  delete env.DATABASE_URL;
  if (databaseUrl !== undefined) env.DATABASE_URL = databaseUrl;
  return env;
}

const admin = (args: string[], env: NodeJS.ProcessEnv = envWith(testDatabaseUrl())): Promise<Run> =>
  runScript('services/admin/cli.ts', args, env);

/** A successful --json run: exit 0, exactly one line on stdout, and that line is JSON. */
function jsonLine(r: Run): Record<string, unknown> {
  assert.equal(r.code, 0, `exit ${r.code}; stderr: ${r.stderr}`);
  assert.match(r.stdout, /^[^\n]+\n$/, `stdout must be exactly one line: ${JSON.stringify(r.stdout)}`);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

function assertUsageError(r: Run, message: RegExp): void {
  assert.equal(r.code, 2, `exit ${r.code}; stderr: ${r.stderr}`);
  assert.equal(r.stdout, '');
  const [first, ...rest] = r.stderr.split('\n');
  assert.match(first!, message);
  assert.match(rest.join('\n'), /Usage: npm run admin -- /);
}

function assertFailure(r: Run, message: RegExp): void {
  assert.equal(r.code, 1, `exit ${r.code}; stderr: ${r.stderr}`);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, message);
}

interface CreatedOrg {
  organizationId: string;
  keyId: string;
  apiKey: string;
  scopes: string[];
}

async function createOrg(...extra: string[]): Promise<CreatedOrg> {
  const out = jsonLine(await admin(['create-org', '--name', 'Operator Test ApS', '--json', ...extra]));
  return out as unknown as CreatedOrg;
}

const sql = () => testDb().db.sql;

async function organizationCount(): Promise<number> {
  const [row] = await sql()<{ n: number }[]>`SELECT count(*)::int AS n FROM organizations`;
  return row!.n;
}

describe('operator command (npm run admin)', () => {
  describe('create-org', () => {
    it('prints one JSON line with the organization, a sandbox key holding every scope, and stores the seller', async () => {
      const r = await admin([
        'create-org', '--name', 'Bager Hansen ApS', '--cvr', '12345678', '--sandbox', '--street', 'Bagergade 1',
        '--postal-code', '8000', '--city', 'Aarhus C', '--email', 'faktura@bager.dk', '--bank-reg', '1234',
        '--bank-account', '0012345678', '--fi-creditor', '85799665', '--json',
      ]);
      assert.equal(r.stderr, '');
      const out = jsonLine(r);
      assert.deepEqual(Object.keys(out), ['organizationId', 'keyId', 'apiKey', 'scopes']);
      assert.match(String(out.organizationId), UUID);
      assert.match(String(out.keyId), UUID);
      assert.deepEqual(out.scopes, [...SCOPES]);
      const [org] = await sql()`
        SELECT name, cvr, sandbox, street, postal_code, city, email, bank_reg, bank_account, fi_creditor_number
        FROM organizations WHERE id = ${String(out.organizationId)}`;
      assert.deepEqual({ ...org }, {
        name: 'Bager Hansen ApS', cvr: '12345678', sandbox: true, street: 'Bagergade 1', postal_code: '8000',
        city: 'Aarhus C', email: 'faktura@bager.dk', bank_reg: '1234', bank_account: '0012345678', fi_creditor_number: '85799665',
      });
    });

    it('--scopes limits the first key to those scopes, in catalogue order', async () => {
      const out = jsonLine(await admin(['create-org', '--name', 'Scoped ApS', '--sandbox', '--scopes', 'invoices:read,customers:read', '--json']));
      assert.deepEqual(out.scopes, ['customers:read', 'invoices:read'].sort((a, b) => SCOPES.indexOf(a as never) - SCOPES.indexOf(b as never)));
      const [key] = await sql()`SELECT scopes FROM api_keys WHERE id = ${String(out.keyId)}`;
      assert.deepEqual(key!.scopes, out.scopes);
    });

    it('issues sk_test_ keys for sandbox and sk_live_ keys otherwise, each with at least 128 random bits', async () => {
      const sandbox = await createOrg('--sandbox');
      const live = await createOrg();
      const again = await createOrg();
      for (const [key, prefix] of [[sandbox.apiKey, 'sk_test_'], [live.apiKey, 'sk_live_'], [again.apiKey, 'sk_live_']] as const) {
        assert.ok(key.startsWith(prefix), `${key} should start with ${prefix}`);
        const secret = key.slice(prefix.length);
        assert.match(secret, /^[0-9A-Za-z]+$/);
        assert.ok(secret.length * Math.log2(62) >= 128, `${secret.length} base62 characters carry fewer than 128 bits`);
      }
      assert.notEqual(live.apiKey.slice(8), again.apiKey.slice(8));
      const [row] = await sql()`SELECT sandbox, cvr FROM organizations WHERE id = ${live.organizationId}`;
      assert.deepEqual({ ...row }, { sandbox: false, cvr: null });
    });

    it('stores only the SHA-256 of the key: the key text is in no column of its row', async () => {
      const org = await createOrg('--sandbox');
      const [key] = await sql()<{ organization_id: string; key_hash: Buffer; scopes: string[]; revoked_at: Date | null; row: string }[]>`
        SELECT k.organization_id, k.key_hash, k.scopes, k.revoked_at, row_to_json(k)::text AS row
        FROM api_keys k WHERE k.id = ${org.keyId}`;
      assert.ok(key);
      assert.equal(key.organization_id, org.organizationId);
      assert.deepEqual(key.key_hash, sha256(org.apiKey));
      assert.deepEqual(key.scopes, [...SCOPES]);
      assert.equal(key.revoked_at, null);
      const secret = org.apiKey.slice('sk_test_'.length);
      assert.ok(!key.row.includes(org.apiKey));
      assert.ok(!key.row.includes(secret));
      // Nor in hex or base64 of itself, should a column ever store an encoding of it.
      assert.ok(!key.row.includes(Buffer.from(org.apiKey).toString('hex')));
      assert.ok(!key.row.includes(Buffer.from(org.apiKey).toString('base64')));
      const [orgRow] = await sql()<{ row: string }[]>`SELECT row_to_json(o)::text AS row FROM organizations o WHERE o.id = ${org.organizationId}`;
      assert.ok(!orgRow!.row.includes(secret));
    });

    it('without --json shows the key once and says it will not be shown again', async () => {
      const r = await admin(['create-org', '--name', 'Human Output ApS', '--sandbox']);
      assert.equal(r.code, 0, r.stderr);
      const key = /(sk_test_[0-9A-Za-z]+)/.exec(r.stdout)?.[1];
      assert.ok(key, r.stdout);
      assert.match(r.stdout, /will not be shown again/);
      const [row] = await sql()`SELECT o.name FROM api_keys k JOIN organizations o ON o.id = k.organization_id WHERE k.key_hash = ${sha256(key)}`;
      assert.equal(row?.name, 'Human Output ApS');
    });

    const invalid: [string, string[], RegExp][] = [
      ['a missing --name', [], /^error: --name is required$/],
      ['an empty --name', ['--name', ''], /^error: --name must be 1 to 200 characters/],
      ['a blank --name', ['--name', '   '], /^error: --name must be 1 to 200 characters/],
      ['a --name of 201 characters', ['--name', 'x'.repeat(201)], /^error: --name must be 1 to 200 characters/],
      ['a --cvr of 7 digits', ['--name', 'A', '--cvr', '1234567'], /^error: --cvr must be exactly 8 digits/],
      ['a --cvr with letters', ['--name', 'A', '--cvr', '1234567a'], /^error: --cvr must be exactly 8 digits/],
      ['a --bank-reg of 3 digits', ['--name', 'A', '--bank-reg', '123'], /^error: --bank-reg must be/],
      ['an --fi-creditor not starting with 8', ['--name', 'A', '--fi-creditor', '75799665'], /^error: --fi-creditor must be an FI creditor number: 8 digits, the first an 8/],
      ['an --fi-creditor of 7 digits', ['--name', 'A', '--fi-creditor', '8579966'], /^error: --fi-creditor must be an FI creditor number/],
      ['an --email without @', ['--name', 'A', '--email', 'nobody'], /^error: --email must be/],
      ['an unknown flag', ['--name', 'A', '--colour', 'red'], /^error: unknown flag --colour$/],
      ['a flag without its value', ['--name'], /^error: --name needs a value$/],
      ['a flag given twice', ['--name', 'A', '--name', 'B'], /^error: --name is given twice$/],
      ['a stray argument', ['--name', 'A', 'extra'], /^error: unexpected argument "extra"$/],
      ['a value on a boolean flag', ['--name', 'A', '--sandbox=yes'], /^error: --sandbox takes no value$/],
      ['an unknown scope', ['--name', 'A', '--scopes', 'customers:read,nope'], /^error: unknown scope nope/],
    ];
    for (const [what, args, message] of invalid) {
      it(`refuses ${what} with exit 2, a one-line message and the usage on stderr`, async () => {
        const before = await organizationCount();
        assertUsageError(await admin(['create-org', ...args, '--json']), message);
        assert.equal(await organizationCount(), before);
      });
    }
  });

  describe('create-key', () => {
    it('creates a key with exactly the scopes asked for, in catalogue order', async () => {
      const org = await createOrg('--sandbox');
      const out = jsonLine(await admin(['create-key', '--org', org.organizationId, '--scopes', 'customers:read, api:discovery', '--json']));
      assert.deepEqual(Object.keys(out), ['keyId', 'apiKey', 'scopes']);
      assert.deepEqual(out.scopes, ['api:discovery', 'customers:read']);
      assert.match(String(out.apiKey), /^sk_test_[0-9A-Za-z]+$/);
      const [row] = await sql()`SELECT organization_id, scopes, key_hash FROM api_keys WHERE id = ${String(out.keyId)}`;
      assert.equal(row?.organization_id, org.organizationId);
      assert.deepEqual(row?.scopes, ['api:discovery', 'customers:read']);
      assert.deepEqual(row?.key_hash, sha256(String(out.apiKey)));
    });

    it("gives every scope by default and follows the organization's live flag", async () => {
      const org = await createOrg();
      const out = jsonLine(await admin(['create-key', '--org', org.organizationId, '--json']));
      assert.deepEqual(out.scopes, [...SCOPES]);
      assert.match(String(out.apiKey), /^sk_live_[0-9A-Za-z]+$/);
    });

    it('refuses an unknown scope with exit 2, naming it and the valid scopes, and creates no key', async () => {
      const org = await createOrg('--sandbox');
      const r = await admin(['create-key', '--org', org.organizationId, '--scopes', 'customers:read,invoices:delete', '--json']);
      assertUsageError(r, /^error: unknown scope invoices:delete; valid scopes: api:discovery, customers:read, /);
      assert.ok(r.stderr.includes(SCOPES.join(', ')));
      const keys = await sql()`SELECT id FROM api_keys WHERE organization_id = ${org.organizationId}`;
      assert.deepEqual(keys.map((k) => k.id), [org.keyId]);
    });

    it('refuses an empty scope list and an --org that is not a UUID with exit 2', async () => {
      const org = await createOrg('--sandbox');
      assertUsageError(await admin(['create-key', '--org', org.organizationId, '--scopes', ' , ']), /^error: --scopes needs at least one scope/);
      assertUsageError(await admin(['create-key', '--org', 'org_123']), /^error: --org must be a UUID, got "org_123"$/);
      assertUsageError(await admin(['create-key']), /^error: --org is required$/);
    });

    it('fails with exit 1 for an organization that does not exist', async () => {
      const missing = '01900000-0000-7000-8000-000000000000';
      assertFailure(await admin(['create-key', '--org', missing, '--json']), new RegExp(`^error: No organization with id ${missing} exists\\.\\n$`));
    });
  });

  describe('revoke-key and list-keys', () => {
    it('revokes a key (revoked_at is set), idempotently, and fails for an unknown key', async () => {
      const org = await createOrg('--sandbox');
      const out = jsonLine(await admin(['revoke-key', '--key', org.keyId, '--json']));
      assert.deepEqual(out, { keyId: org.keyId, revoked: true });
      const [row] = await sql()<{ revoked_at: Date | null }[]>`SELECT revoked_at FROM api_keys WHERE id = ${org.keyId}`;
      assert.ok(row?.revoked_at instanceof Date);
      const again = await admin(['revoke-key', '--key', org.keyId]);
      assert.equal(again.code, 0, again.stderr);
      assert.match(again.stdout, /already revoked/);
      const [same] = await sql()<{ revoked_at: Date | null }[]>`SELECT revoked_at FROM api_keys WHERE id = ${org.keyId}`;
      assert.deepEqual(same?.revoked_at, row.revoked_at);
      const missing = '01900000-0000-7000-8000-0000000000ff';
      assertFailure(await admin(['revoke-key', '--key', missing, '--json']), /^error: No API key with id 01900000-0000-7000-8000-0000000000ff exists\.\n$/);
      assertUsageError(await admin(['revoke-key', '--key', 'sk_test_abc']), /^error: --key must be a UUID/);
    });

    it('lists every key of the organization with prefix, scopes and dates, never a secret', async () => {
      const org = await createOrg('--sandbox');
      const second = jsonLine(await admin(['create-key', '--org', org.organizationId, '--scopes', 'invoices:read', '--json']));
      jsonLine(await admin(['revoke-key', '--key', org.keyId, '--json']));
      const r = await admin(['list-keys', '--org', org.organizationId, '--json']);
      const out = jsonLine(r);
      assert.deepEqual(Object.keys(out), ['keys']);
      const keys = out.keys as Record<string, unknown>[];
      assert.deepEqual(keys.map((k) => Object.keys(k)), [
        ['keyId', 'prefix', 'scopes', 'createdAt', 'revokedAt'],
        ['keyId', 'prefix', 'scopes', 'createdAt', 'revokedAt'],
      ]);
      assert.deepEqual(keys.map((k) => [k.keyId, k.scopes]), [[org.keyId, [...SCOPES]], [second.keyId, ['invoices:read']]]);
      assert.match(String(keys[0]!.revokedAt), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.equal(keys[1]!.revokedAt, null);
      assert.match(String(keys[0]!.createdAt), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.ok(String(keys[0]!.prefix).startsWith('sk_test_'));

      const human = await admin(['list-keys', '--org', org.organizationId]);
      assert.equal(human.code, 0, human.stderr);
      assert.ok(human.stdout.includes(org.keyId) && human.stdout.includes(String(second.keyId)));
      for (const secret of [org.apiKey.slice(8), String(second.apiKey).slice(8)]) {
        assert.ok(!r.stdout.includes(secret), 'list-keys --json printed a secret');
        assert.ok(!human.stdout.includes(secret), 'list-keys printed a secret');
      }
      assert.doesNotMatch(r.stdout, /apiKey/);
    });

    it('fails with exit 1 for an organization that does not exist', async () => {
      assertFailure(await admin(['list-keys', '--org', '01900000-0000-7000-8000-00000000abcd']), /^error: No organization with id/);
    });
  });

  describe('update-org', () => {
    it('changes the given columns and leaves the others alone', async () => {
      const org = await createOrg('--cvr', '11112222', '--street', 'Gammel Vej 1', '--city', 'Odense');
      const out = jsonLine(await admin([
        'update-org', '--org', org.organizationId, '--name', 'Nyt Navn A/S', '--cvr', '87654321', '--street', 'Ny Vej 2',
        '--postal-code', '2100', '--email', 'bogholderi@nyt.dk', '--bank-reg', '9876', '--bank-account', '1234567890', '--fi-creditor', '81234567', '--json',
      ]));
      assert.deepEqual(out, { organizationId: org.organizationId, updated: true });
      const [row] = await sql()`
        SELECT name, cvr, sandbox, street, postal_code, city, email, bank_reg, bank_account, fi_creditor_number, updated_at > created_at AS touched
        FROM organizations WHERE id = ${org.organizationId}`;
      assert.deepEqual({ ...row }, {
        name: 'Nyt Navn A/S', cvr: '87654321', sandbox: false, street: 'Ny Vej 2', postal_code: '2100', city: 'Odense',
        email: 'bogholderi@nyt.dk', bank_reg: '9876', bank_account: '1234567890', fi_creditor_number: '81234567', touched: true,
      });
    });

    it('refuses bad input with exit 2 and an unknown organization with exit 1', async () => {
      const org = await createOrg();
      assertUsageError(await admin(['update-org', '--org', org.organizationId]), /^error: update-org needs at least one of --name, --cvr, /);
      assertUsageError(await admin(['update-org', '--org', org.organizationId, '--cvr', '123']), /^error: --cvr must be exactly 8 digits/);
      assertUsageError(await admin(['update-org', '--name', 'X']), /^error: --org is required$/);
      assertFailure(
        await admin(['update-org', '--org', '01900000-0000-7000-8000-00000000beef', '--name', 'X', '--json']),
        /^error: No organization with id 01900000-0000-7000-8000-00000000beef exists\./,
      );
      const [row] = await sql()`SELECT name, cvr FROM organizations WHERE id = ${org.organizationId}`;
      assert.deepEqual({ ...row }, { name: 'Operator Test ApS', cvr: null });
    });
  });

  describe('usage', () => {
    it('prints the usage on stdout and exits 0 for --help, no command, and a command with --help', async () => {
      for (const args of [['--help'], [], ['-h'], ['help']]) {
        const r = await admin(args);
        assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
        assert.equal(r.stderr, '');
        assert.match(r.stdout, /^Usage: npm run admin -- <command>/);
        for (const command of ['create-org', 'create-key', 'revoke-key', 'list-keys', 'update-org']) assert.ok(r.stdout.includes(command));
      }
      const r = await admin(['create-org', '--help']);
      assert.equal(r.code, 0);
      assert.match(r.stdout, /^Usage: npm run admin -- create-org --name NAME/);
      assert.match(r.stdout, /--bank-account/);
    });

    it('refuses an unknown command with exit 2', async () => {
      assertUsageError(await admin(['delete-org', '--org', 'x']), /^error: unknown command "delete-org"$/);
    });
  });

  describe('which database', () => {
    let dir: string;
    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), 'faktura-admin-cli-'));
    });
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    it('exits 1 with the message when neither DATABASE_URL nor the runtime file exists', async () => {
      const r = await admin(['create-org', '--name', 'Nowhere ApS', '--json'], envWith(undefined, { DATA_DIR: dir }));
      assert.equal(r.code, 1);
      assert.equal(r.stdout, '');
      assert.equal(r.stderr, `error: ${noDatabaseMessage(dir)}\n`);
      assert.equal(
        noDatabaseMessage(dir),
        `No database: DATABASE_URL is not set and DATA_DIR ${dir} has no runtime.json (\`npm start\` writes it there). ` +
          'Run this command with the DATA_DIR of the running service (or start the service with this one), or set DATABASE_URL.',
      );
      const m = await runScript('services/db/migrate-cli.ts', [], envWith(undefined, { DATA_DIR: dir }));
      assert.equal(m.code, 1);
      assert.equal(m.stderr, `error: ${noDatabaseMessage(dir)}\n`);
    });

    it('names the DATA_DIR it looked in (resolved) when the service runs with another one', async () => {
      // The running service's DATA_DIR has its runtime file; the command is given another, relative to its directory.
      writeFileSync(join(dir, 'runtime.json'), JSON.stringify({ databaseUrl: testDatabaseUrl() }));
      const other = mkdtempSync(join(tmpdir(), 'faktura-admin-cli-other-'));
      try {
        const r = await admin(['list-keys', '--org', '01900000-0000-7000-8000-000000000001'], envWith(undefined, { DATA_DIR: relative(ROOT, other) }));
        assertFailure(r, /^error: No database: /);
        assert.ok(r.stderr.includes(`DATA_DIR ${other} has no runtime.json`), r.stderr);
        assert.match(r.stderr, /or set DATABASE_URL\.\n$/);
        assert.doesNotMatch(r.stderr, /start the service with `npm start` first/);
      } finally {
        rmSync(other, { recursive: true, force: true });
      }
    });

    it("uses the embedded stack's database from $DATA_DIR/runtime.json when DATABASE_URL is unset", async () => {
      const org = await createOrg();
      writeFileSync(join(dir, 'runtime.json'), JSON.stringify({ databaseUrl: testDatabaseUrl(), apiUrl: 'http://127.0.0.1:1' }));
      const out = jsonLine(await admin(['list-keys', '--org', org.organizationId, '--json'], envWith(undefined, { DATA_DIR: dir })));
      assert.deepEqual((out.keys as { keyId: string }[]).map((k) => k.keyId), [org.keyId]);
    });

    it('prefers DATABASE_URL over the runtime file', async () => {
      const org = await createOrg();
      writeFileSync(join(dir, 'runtime.json'), JSON.stringify({ databaseUrl: 'postgres://nobody:secret@127.0.0.1:1/none' }));
      const out = jsonLine(await admin(['list-keys', '--org', org.organizationId, '--json'], envWith(testDatabaseUrl(), { DATA_DIR: dir })));
      assert.equal((out.keys as unknown[]).length, 1);
    });

    it('exits 1 on a runtime file without databaseUrl, and on an unreachable database without showing its password', async () => {
      writeFileSync(join(dir, 'runtime.json'), '{"apiUrl":"http://127.0.0.1:1"}');
      assertFailure(await admin(['list-keys', '--org', '01900000-0000-7000-8000-000000000001'], envWith(undefined, { DATA_DIR: dir })), /names no databaseUrl/);
      writeFileSync(join(dir, 'runtime.json'), JSON.stringify({ databaseUrl: 'postgres://nobody:hunter2@127.0.0.1:1/none' }));
      const r = await admin(['list-keys', '--org', '01900000-0000-7000-8000-000000000001', '--json'], envWith(undefined, { DATA_DIR: dir }));
      assertFailure(r, /^error: cannot use the database at postgres:\/\/nobody:\*\*\*@127\.0\.0\.1:1\/none \(from .*runtime\.json\): /);
      assert.match(r.stderr, /Is the service running\? Start it with `npm start`, or set DATABASE_URL\.\n$/);
      assert.ok(!r.stderr.includes('hunter2'));
      const m = await runScript('services/db/migrate-cli.ts', [], envWith(undefined, { DATA_DIR: dir }));
      assertFailure(m, /^error: cannot use the database at postgres:\/\/nobody:\*\*\*@127\.0\.0\.1:1\/none /);
      assert.ok(!m.stderr.includes('hunter2'));
    });

    it('exits 1 with one line, no stack, for a DATABASE_URL that cannot be read', async () => {
      const r = await admin(['create-org', '--name', 'X', '--json'], envWith('garbage'));
      assertFailure(r, /^error: The database URL cannot be used: Invalid URL\.\n$/);
    });

    describe('on a fresh database', () => {
      const names: string[] = [];
      const freshDatabase = async (): Promise<string> => {
        const name = `faktura_cli_${process.pid}_${names.length}_${Date.now().toString(36)}`;
        await sql().unsafe(`CREATE DATABASE ${name}`);
        names.push(name);
        const url = new URL(testDatabaseUrl());
        url.pathname = `/${name}`;
        return url.toString();
      };
      after(async () => {
        for (const name of names) await sql().unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      });

      it('the CLI migrates first, logging to stderr, so stdout still holds only the JSON line', async () => {
        const url = await freshDatabase();
        const r = await admin(['create-org', '--name', 'First Run ApS', '--sandbox', '--json'], envWith(url));
        const out = jsonLine(r);
        assert.match(String(out.apiKey), /^sk_test_/);
        assert.equal(r.stderr, MIGRATIONS.map((f) => `applied migration ${f}\n`).join(''));
      });

      it('npm run migrate applies the pending migrations, prints them, and then has nothing to do', async () => {
        const url = await freshDatabase();
        const first = await runScript('services/db/migrate-cli.ts', [], envWith(url));
        assert.equal(first.code, 0, first.stderr);
        assert.equal(
          first.stdout,
          `${MIGRATIONS.map((f) => `applied migration ${f}\n`).join('')}Applied ${MIGRATIONS.length} migration${MIGRATIONS.length === 1 ? '' : 's'}; the database is up to date.\n`,
        );
        const second = await runScript('services/db/migrate-cli.ts', [], envWith(url));
        assert.equal(second.code, 0, second.stderr);
        assert.equal(second.stdout, 'The database is up to date; no migrations were pending.\n');
      });

      it('npm run migrate answers --help with its usage and refuses other arguments (exit 2), touching no database', async () => {
        const url = await freshDatabase();
        const help = await runScript('services/db/migrate-cli.ts', ['--help'], envWith(url));
        assert.equal(help.code, 0);
        assert.match(help.stdout, /^usage: npm run migrate/);
        const odd = await runScript('services/db/migrate-cli.ts', ['--force'], envWith(url));
        assert.equal(odd.code, 2);
        assert.match(odd.stderr, /^error: unexpected argument "--force"\nusage: npm run migrate/);
        const sql = postgres(url, { max: 1, onnotice: () => {} });
        try {
          const [found] = await sql`SELECT to_regclass('public.customers') AS t`;
          assert.equal(found!.t, null, 'no migration ran');
        } finally {
          await sql.end();
        }
      });
    });
  });

  describe('keys through the API', () => {
    /** Lets the test wait for the revocation notice instead of sleeping. */
    class WatchedCache extends ApiKeyCache {
      private readonly waiting = new Map<string, () => void>();
      evicted(hashHex: string): Promise<void> {
        return new Promise((done) => this.waiting.set(hashHex, done));
      }
      override evict(hashHex: string): void {
        super.evict(hashHex);
        this.waiting.get(hashHex)?.();
      }
    }

    it('a key made by the CLI works, its scopes hold, and once revoked by the CLI it is refused at once', async () => {
      const cache = new WatchedCache(30_000);
      const t = await startTestApp({ authCache: cache });
      const stopListening = await listenForKeyChanges(testDb().db, cache);
      try {
        const org = await createOrg('--sandbox');
        const ok = await call(t.app, 'GET', '/v1', { key: org.apiKey });
        assert.equal(ok.status, 200);
        assert.equal(ok.body.data.organizationId, org.organizationId);
        assert.deepEqual(ok.body.data.scopes, [...SCOPES]);

        const limited = jsonLine(await admin(['create-key', '--org', org.organizationId, '--scopes', 'customers:read', '--json']));
        const denied = await call(t.app, 'GET', '/v1', { key: String(limited.apiKey) });
        assert.equal(denied.status, 403);
        assert.equal(denied.body.error.code, 'insufficient_scope');

        // The key is now cached: without the revocation notice it would keep working until the TTL ran out.
        const hash = sha256(org.apiKey).toString('hex');
        assert.ok(cache.get(hash));
        const evicted = cache.evicted(hash);
        jsonLine(await admin(['revoke-key', '--key', org.keyId, '--json']));
        await evicted;
        const refused = await call(t.app, 'GET', '/v1', { key: org.apiKey });
        assert.equal(refused.status, 401);
        assert.equal(refused.body.error.code, 'unauthenticated');
      } finally {
        await stopListening();
        await t.close();
      }
    });
  });
});
