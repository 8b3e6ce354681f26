import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, openSync, closeSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { freePort } from './ports.ts';
import type { ChildExit } from './restate-server.ts';

/**
 * A private S3 server with Object Lock: Ceph's radosgw (Debian's radosgw, ceph-mon and ceph-osd packages) on
 * loopback, the document archive of `npm run start:cluster` and of the archive's tests (docs/operations.md,
 * "Document archive").
 *
 *   const s3 = await startCephS3({ dataDir: join(DATA_DIR, 'ceph') });
 *   … DOCUMENT_STORE=s3 S3_ENDPOINT=s3.endpoint S3_BUCKET=s3.bucket AWS_ACCESS_KEY_ID=… …
 *   await s3.stop();
 *
 * One monitor, one OSD on the in-memory object store (nothing survives a stop: it is a development and test archive)
 * and one gateway, all on 127.0.0.1, with cephx between them and keys kept in the data directory. A user is created
 * with radosgw-admin, and the bucket with Object Lock enabled (which also turns on versioning): the same
 * configuration the archive requires of a real bucket. Its Object Lock is the server's: a locked version cannot be
 * deleted or its lock shortened by anyone.
 */
export interface StartCephS3Options {
  /** The cluster's directory: configuration, keys, monitor store, logs (created when missing; must be fresh). */
  dataDir: string;
  /** The gateway's loopback port; default a free one. */
  port?: number;
  /** The bucket to create; default `faktura-documents`. */
  bucket?: string;
  /** How long to wait for the gateway to answer; default 60 s. */
  readyTimeoutMs?: number;
}

export interface RunningCephS3 {
  /** http://127.0.0.1:<port>: S3_ENDPOINT. */
  endpoint: string;
  port: number;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** The environment a service needs to use it: DOCUMENT_STORE=s3, S3_*, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY. */
  env: Record<string, string>;
  /** monitor, OSD and gateway. */
  pids: { mon: number; osd: number; rgw: number };
  logDir: string;
  /** SIGTERM to the three daemons, SIGKILL after `timeoutMs` (default 3 s). Safe to call twice. */
  stop(timeoutMs?: number): Promise<void>;
  /** Settles when any of the daemons has exited, for whatever reason. */
  exited: Promise<ChildExit>;
}

const run = promisify(execFile);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const REGION = 'us-east-1';

/** The configuration: cephx, one replica, the in-memory store, and everything under the cluster directory. */
function cephConf(dir: string, fsid: string, monPort: number, rgwPort: number): string {
  return `[global]
fsid = ${fsid}
mon host = v2:127.0.0.1:${monPort}
mon initial members = a
public addr = 127.0.0.1
ms bind msgr1 = false
auth allow insecure global id reclaim = false
keyring = ${dir}/$name.keyring
run dir = ${dir}/run
admin socket = ${dir}/run/$name.asok
log file = ${dir}/log/$name.log
pid file = ${dir}/run/$name.pid
mon data = ${dir}/mon
osd data = ${dir}/osd
osd objectstore = memstore
memstore device bytes = 1073741824
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
mon allow pool size one = true
mon allow pool delete = false
mon max pg per osd = 1000
mon warn on pool no redundancy = false
mon data avail warn = 1
mon data avail crit = 0
rgw frontends = beast endpoint=127.0.0.1:${rgwPort}
rgw data = ${dir}/rgw
`;
}

export async function startCephS3(opts: StartCephS3Options): Promise<RunningCephS3> {
  const dir = resolve(opts.dataDir);
  for (const sub of ['mon', 'osd', 'run', 'log', 'rgw']) mkdirSync(join(dir, sub), { recursive: true });
  const logDir = join(dir, 'log');
  const conf = join(dir, 'ceph.conf');
  const [monPort, port] = [await freePort(), opts.port ?? (await freePort())];
  const fsid = randomUUID();
  writeFileSync(conf, cephConf(dir, fsid, monPort, port));
  const tool = async (cmd: string, args: string[]): Promise<string> => {
    try {
      return (await run(cmd, args, { cwd: dir, timeout: 60_000 })).stdout;
    } catch (err) {
      const e = err as NodeJS.ErrnoException & { stderr?: string };
      if (e.code === 'ENOENT') throw new Error(`${cmd} is not installed: install Debian's radosgw, ceph-mon and ceph-osd packages (deploy/ensure-installed.sh does)`);
      throw new Error(`${cmd} ${args.join(' ')} failed: ${e.stderr?.trim() || e.message}`);
    }
  };

  // Keys: the monitor's, the administrator's (the ceph and radosgw-admin commands), the OSD's and the gateway's.
  const keyring = (name: string) => join(dir, `${name}.keyring`);
  await tool('ceph-authtool', ['--create-keyring', keyring('mon.a'), '--gen-key', '-n', 'mon.', '--cap', 'mon', 'allow *']);
  const caps: Record<string, string[]> = {
    'client.admin': ['mon', 'allow *', 'osd', 'allow *', 'mgr', 'allow *'],
    'osd.0': ['mon', 'allow profile osd', 'osd', 'allow *', 'mgr', 'allow profile osd'],
    'client.rgw': ['mon', 'allow rw', 'osd', 'allow rwx', 'mgr', 'allow rw'],
  };
  const all = join(dir, 'mkfs.keyring');
  await tool('ceph-authtool', ['--create-keyring', all, '--import-keyring', keyring('mon.a')]);
  for (const [name, c] of Object.entries(caps)) {
    const capArgs = c.flatMap((v, i) => (i % 2 === 0 ? ['--cap', v] : [v]));
    await tool('ceph-authtool', ['--create-keyring', keyring(name), '--gen-key', '-n', name, ...capArgs]);
    await tool('ceph-authtool', [all, '--import-keyring', keyring(name)]);
  }
  await tool('monmaptool', ['--create', '--fsid', fsid, '--addv', 'a', `[v2:127.0.0.1:${monPort}]`, join(dir, 'monmap')]);
  await tool('ceph-mon', ['-c', conf, '--mkfs', '-i', 'a', '--monmap', join(dir, 'monmap'), '--keyring', all]);

  const children: ChildProcess[] = [];
  const exits: Promise<ChildExit>[] = [];
  let anyExit: (how: ChildExit) => void = () => {};
  const exited = new Promise<ChildExit>((r) => (anyExit = r));
  const daemon = (name: string, cmd: string, args: string[]): ChildProcess => {
    const out = openSync(join(logDir, `${name}.out`), 'a');
    // Its own process group: a Ctrl-C in the terminal reaches only the parent, which stops it after the services.
    const child = spawn(cmd, ['-f', '-c', conf, ...args], { stdio: ['ignore', out, out], detached: true, cwd: dir });
    closeSync(out);
    child.once('error', () => {});
    children.push(child);
    exits.push(
      new Promise<ChildExit>((r) =>
        child.exitCode !== null || child.signalCode !== null ? r({ code: child.exitCode, signal: child.signalCode }) : child.once('exit', (code, signal) => r({ code, signal })),
      ).then((how) => {
        anyExit(how);
        return how;
      }),
    );
    return child;
  };
  const kill = () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  };
  // Never leak a daemon if the parent dies without stopping them.
  process.once('exit', kill);
  const stop = async (timeoutMs = 3000): Promise<void> => {
    for (const c of children) if (c.pid !== undefined && c.exitCode === null && c.signalCode === null) c.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(exits), new Promise((r) => (timer = setTimeout(r, timeoutMs)))]);
    clearTimeout(timer);
    kill();
    await Promise.all(exits);
    process.removeListener('exit', kill);
  };

  try {
    const mon = daemon('mon.a', 'ceph-mon', ['-i', 'a']);
    // The OSD's id comes from the monitor, which answers once it has formed its quorum of one.
    await tool('ceph', ['-c', conf, '--connect-timeout', '30', 'osd', 'create']);
    await tool('ceph-osd', ['-c', conf, '-i', '0', '--mkfs']);
    const osd = daemon('osd.0', 'ceph-osd', ['-i', '0']);
    const rgw = daemon('client.rgw', 'radosgw', ['-n', 'client.rgw']);
    const accessKeyId = randomBytes(10).toString('hex').toUpperCase();
    const secretAccessKey = randomBytes(20).toString('base64url');
    await tool('radosgw-admin', ['-c', conf, 'user', 'create', '--uid=faktura', '--display-name=faktura', `--access-key=${accessKeyId}`, `--secret-key=${secretAccessKey}`]);
    const endpoint = `http://127.0.0.1:${port}`;
    const bucket = opts.bucket ?? 'faktura-documents';
    const client = new S3Client({ endpoint, region: REGION, forcePathStyle: true, credentials: { accessKeyId, secretAccessKey }, maxAttempts: 1 });
    const deadline = Date.now() + (opts.readyTimeoutMs ?? 60_000);
    for (;;) {
      const gone = children.find((c) => c.exitCode !== null || c.signalCode !== null);
      if (gone) throw new Error(`${gone.spawnfile} exited while the cluster started; its logs: ${logDir}`);
      try {
        await client.send(new CreateBucketCommand({ Bucket: bucket, ObjectLockEnabledForBucket: true }));
        break;
      } catch (err) {
        if (Date.now() > deadline) throw new Error(`radosgw did not create the bucket within ${opts.readyTimeoutMs ?? 60_000} ms (${(err as Error).message}); its logs: ${logDir}`);
        await sleep(200);
      }
    }
    client.destroy();
    return {
      endpoint,
      port,
      bucket,
      region: REGION,
      accessKeyId,
      secretAccessKey,
      env: { DOCUMENT_STORE: 's3', S3_ENDPOINT: endpoint, S3_BUCKET: bucket, S3_REGION: REGION, AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: secretAccessKey },
      pids: { mon: mon.pid!, osd: osd.pid!, rgw: rgw.pid! },
      logDir,
      stop,
      exited,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
