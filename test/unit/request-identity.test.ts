import assert from 'node:assert/strict';
import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readConfig } from '../../services/shared/config.ts';
import { identityPublicKey, readOrCreateRequestIdentity, requestIdentityPath } from '../../services/shared/request-identity.ts';
import { runWorkflows } from '../../workflows/main.ts';

/** Restate's request identity: the key's `publickeyv1_` form, the key pair npm start keeps, and the setting. */
describe('request identity', () => {
  it('writes a public key as Restate does: publickeyv1_ and the base58 of its 32 raw bytes', () => {
    // RFC 8032, 7.1, test 1: the secret key and its public key d75a9801…f707511a.
    const seed = Buffer.from('9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60', 'hex');
    const key = createPrivateKey({ key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]), format: 'der', type: 'pkcs8' });
    assert.equal(identityPublicKey(key), 'publickeyv1_FVen3X669xLzsi6N2V91DoiyzHzg1uAgqiT8jZ9nS96Z');
    // That restate-server's signatures verify against keys in this form: test/workflows/engine-operations.test.ts.
  });

  it('refuses a key that is not Ed25519', () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    assert.throws(() => identityPublicKey(privateKey), /Ed25519, not ec/);
  });

  it('makes the key pair once under DATA_DIR/secrets, owner-only, and reads the same one back', () => {
    const dir = mkdtempSync(join(tmpdir(), 'faktura-identity-'));
    try {
      const first = readOrCreateRequestIdentity(dir);
      assert.equal(first.privateKeyPemFile, requestIdentityPath(dir));
      assert.equal(first.privateKeyPemFile, join(dir, 'secrets', 'restate-identity.pem'));
      assert.equal(statSync(first.privateKeyPemFile).mode & 0o777, 0o600);
      assert.match(readFileSync(first.privateKeyPemFile, 'utf8'), /^-----BEGIN PRIVATE KEY-----\n/);
      assert.deepEqual(readOrCreateRequestIdentity(dir), first);
      assert.equal(identityPublicKey(readFileSync(first.privateKeyPemFile, 'utf8')), first.publicKey);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads RESTATE_IDENTITY_KEYS as a comma-separated list and refuses anything else', () => {
    const a = 'publickeyv1_FVen3X669xLzsi6N2V91DoiyzHzg1uAgqiT8jZ9nS96Z';
    const b = 'publickeyv1_27vzCh6NoSvqFy5XCrqBmAjUDuGgPZpJTqCFhSkrPNze';
    assert.deepEqual(readConfig({}).restateIdentityKeys, []);
    assert.deepEqual(readConfig({ RESTATE_IDENTITY_KEYS: a }).restateIdentityKeys, [a]);
    assert.deepEqual(readConfig({ RESTATE_IDENTITY_KEYS: ` ${a}, ${b} ,` }).restateIdentityKeys, [a, b]);
    assert.throws(() => readConfig({ RESTATE_IDENTITY_KEYS: 'FVen3X669xLzsi6N2V91DoiyzHzg1uAgqiT8jZ9nS96Z' }), /RESTATE_IDENTITY_KEYS must be comma-separated publickeyv1_… keys/);
    assert.throws(() => readConfig({ RESTATE_IDENTITY_KEYS: `${a},publickeyv1_0OIl` }), /RESTATE_IDENTITY_KEYS/);
  });

  it('the workflows process does not start in production without it, before it connects to anything', async () => {
    const config = readConfig({ NODE_ENV: 'production', DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' });
    await assert.rejects(runWorkflows(config), /RESTATE_IDENTITY_KEYS is required when NODE_ENV=production/);
  });
});
