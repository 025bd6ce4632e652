/**
 * deploy/kubernetes/ and deploy/Dockerfile, checked without a cluster: every manifest parses and
 * validates against the Kubernetes schemas (kubernetes-models), the wiring that HA depends on holds
 * (two job masters with --ha and --listen at the pod IP, task managers joining the same --ha-job
 * through the store, the token from a Secret, the checkpoint directory on one ReadWriteMany volume
 * at the same path in both), and every flag the manifests give exists in `weir run --help` /
 * `weir taskmanager --help`, so the manifests cannot drift from the CLI.
 */
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { apps, v1 } from 'kubernetes-models';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { REPO } from '../cli/run-cli.ts';

/**
 * The raw schema validators of kubernetes-models 4 (the last major release whose packages declare
 * Node >= 14; 5 declares Node 22 and makes `npm ci` warn). Its `exports` map does not list them, so
 * they are loaded by file path.
 */
type SchemaValidate = (data: unknown) => boolean;
const schemaOf = (name: string): SchemaValidate =>
  (createRequire(import.meta.url)(path.join(REPO, 'node_modules/kubernetes-models/_schemas', `${name}.js`)) as { validate: SchemaValidate }).validate;
const deploymentSchema = schemaOf('IoK8sApiAppsV1Deployment');
const configMapSchema = schemaOf('IoK8sApiCoreV1ConfigMap');
const namespaceSchema = schemaOf('IoK8sApiCoreV1Namespace');
const claimSchema = schemaOf('IoK8sApiCoreV1PersistentVolumeClaim');
const secretSchema = schemaOf('IoK8sApiCoreV1Secret');
const serviceSchema = schemaOf('IoK8sApiCoreV1Service');

const exec = promisify(execFile);
const KUBE_DIR = path.join(REPO, 'deploy/kubernetes');

/** A manifest is whatever the YAML holds until validated. */
type Manifest = any;

/** The model and schema of each kind the manifests may use; any other kind fails the test until added here. */
const KINDS: Record<string, { model: new (data: never) => { validate(): void }; schema: (data: unknown) => boolean }> = {
  'v1/Namespace': { model: v1.Namespace, schema: namespaceSchema },
  'v1/Secret': { model: v1.Secret, schema: secretSchema },
  'v1/ConfigMap': { model: v1.ConfigMap, schema: configMapSchema },
  'v1/PersistentVolumeClaim': { model: v1.PersistentVolumeClaim, schema: claimSchema },
  'v1/Service': { model: v1.Service, schema: serviceSchema },
  'apps/v1/Deployment': { model: apps.v1.Deployment, schema: deploymentSchema },
};

/** Every .yaml file under deploy/kubernetes, examples/ included. */
function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return yamlFiles(p);
    return /\.ya?ml$/.test(e.name) ? [p] : [];
  });
}

interface Loaded {
  readonly file: string;
  readonly doc: Manifest;
}

function loadManifests(): Loaded[] {
  return yamlFiles(KUBE_DIR).flatMap((file) =>
    parseAllDocuments(readFileSync(file, 'utf8')).map((d) => {
      const rel = path.relative(REPO, file);
      if (d.errors.length > 0 || d.warnings.length > 0) throw new Error(`${rel}: ${[...d.errors, ...d.warnings].map((e) => e.message).join('; ')}`);
      return { file: rel, doc: d.toJS() as Manifest };
    }),
  );
}

/**
 * Throws the schema's complaint about `doc`, or an error for a kind without a schema here, or for a
 * field the schema does not know. kubernetes-models' schemas allow unknown fields (a misspelled
 * `replica:` would pass) where kubectl's strict field validation refuses them, so the schema runs
 * once more on a proxy of `doc` that records which fields it reads: it reads every field it
 * knows of every object it checks, so a field of such an object that it never read is unknown.
 * Objects it reads nothing of are free-form (labels, data) and are not judged.
 */
function validate(doc: Manifest): void {
  const kind = KINDS[`${doc?.apiVersion}/${doc?.kind}`];
  if (kind === undefined) throw new Error(`no schema for ${doc?.apiVersion}/${doc?.kind}`);
  new kind.model(structuredClone(doc) as never).validate();
  const read = new Map<object, Set<PropertyKey>>();
  const proxies = new Map<object, object>();
  const watch = (value: unknown): unknown => {
    if (typeof value !== 'object' || value === null) return value;
    let proxy = proxies.get(value);
    if (proxy === undefined) {
      proxy = new Proxy(value, {
        get(target, key, receiver) {
          let keys = read.get(target);
          if (keys === undefined) read.set(target, (keys = new Set()));
          keys.add(key);
          return watch(Reflect.get(target, key, receiver));
        },
      });
      proxies.set(value, proxy);
    }
    return proxy;
  };
  if (!kind.schema(watch(doc))) throw new Error(`schema refused ${doc.kind}/${doc.metadata?.name}`);
  const unknown: string[] = [];
  const walk = (value: unknown, at: string): void => {
    if (typeof value !== 'object' || value === null) return;
    const keys = read.get(value);
    for (const [key, child] of Object.entries(value)) {
      if (!Array.isArray(value) && keys !== undefined && !keys.has(key)) unknown.push(`${at}/${key}`);
      walk(child, `${at}/${key}`);
    }
  };
  walk(doc, '');
  if (unknown.length > 0) throw new Error(`${doc.kind}/${doc.metadata?.name}: fields unknown to the schema: ${unknown.join(', ')}`);
}

/** The value after `flag` in `args` (the flag given once). */
function flagValue(args: readonly string[], flag: string): string {
  const at = args.indexOf(flag);
  expect(at, `${flag} in ${args.join(' ')}`).toBeGreaterThanOrEqual(0);
  expect(args.lastIndexOf(flag), `${flag} given once`).toBe(at);
  expect(args[at + 1], `a value after ${flag}`).toBeDefined();
  return args[at + 1]!;
}

function envOf(container: Manifest, name: string): Manifest {
  const found = (container.env ?? []).find((e: Manifest) => e.name === name);
  expect(found, `env ${name} of container ${container.name}`).toBeDefined();
  return found;
}

/** Whether the help text lists `flag` as an option (`  --flag <x>`, `-q, --flag`). */
function helpHas(help: string, flag: string): boolean {
  return new RegExp(`^\\s+(?:-\\w, )?${flag.replace(/[-]/g, '\\-')}(?:\\s|$)`, 'm').test(help);
}

const manifests = loadManifests();
const deployments = manifests.filter((m) => m.doc.kind === 'Deployment').map((m) => m.doc);
const byComponent = (component: string): Manifest => {
  const found = deployments.filter((d) => d.metadata.labels?.['app.kubernetes.io/component'] === component);
  expect(found, `one Deployment with component ${component}`).toHaveLength(1);
  return found[0];
};
const jobMaster = byComponent('jobmaster');
const taskManager = byComponent('taskmanager');
const jmContainer = jobMaster.spec.template.spec.containers[0];
const tmContainer = taskManager.spec.template.spec.containers[0];
const jmArgs: string[] = jmContainer.args;
const tmArgs: string[] = tmContainer.args;

describe('deploy/kubernetes: schemas', () => {
  it('finds the namespace, the checkpoint claim, both Deployments and the example secrets', () => {
    const kinds = manifests.map((m) => `${m.doc.kind}/${m.doc.metadata?.name}`).sort();
    expect(kinds).toEqual([
      'Deployment/weir-jobmaster',
      'Deployment/weir-taskmanager',
      'Namespace/weir',
      'PersistentVolumeClaim/weir-checkpoints',
      'Secret/weir-cluster-token',
      'Secret/weir-ha-postgres',
      'Secret/weir-s3',
    ]);
  });

  it.each(manifests.map((m) => [`${m.file}: ${m.doc.kind}/${m.doc.metadata?.name}`, m.doc] as const))('%s validates', (_name, doc) => {
    expect(() => validate(doc)).not.toThrow();
  });

  it('the validation catches a broken manifest (a wrong field, a wrong type, a missing required field)', () => {
    const misspelled = structuredClone(jobMaster);
    misspelled.spec.replica = misspelled.spec.replicas;
    expect(() => validate(misspelled)).toThrow(/replica/);
    const nested = structuredClone(jobMaster);
    nested.spec.template.spec.containers[0].readinessProbe.httpGet.pathh = nested.spec.template.spec.containers[0].readinessProbe.httpGet.path;
    expect(() => validate(nested)).toThrow(/readinessProbe\/httpGet\/pathh/);
    const inArray = structuredClone(taskManager);
    inArray.spec.template.spec.containers[0].volumeMounts[0].mountpath = '/checkpoints';
    expect(() => validate(inArray)).toThrow(/volumeMounts\/0\/mountpath/);
    const wrongType = structuredClone(jobMaster);
    wrongType.spec.template.spec.containers[0].args = 'run';
    expect(() => validate(wrongType)).toThrow(/args/);
    const noImage = structuredClone(taskManager);
    delete noImage.spec.template.spec.containers[0].name;
    expect(() => validate(noImage)).toThrow(/name/);
    const badClaim = structuredClone(manifests.find((m) => m.doc.kind === 'PersistentVolumeClaim')!.doc);
    badClaim.spec.accessModes = 'ReadWriteMany';
    expect(() => validate(badClaim)).toThrow(/accessModes/);
  });

  it('keeps every object in one namespace and every Deployment selecting its own pods', () => {
    const namespace = manifests.find((m) => m.doc.kind === 'Namespace')!.doc.metadata.name;
    for (const m of manifests.filter((x) => x.doc.kind !== 'Namespace')) expect(m.doc.metadata.namespace, m.file).toBe(namespace);
    for (const d of deployments) {
      const labels = d.spec.template.metadata.labels;
      for (const [k, v] of Object.entries(d.spec.selector.matchLabels)) expect(labels[k], `${d.metadata.name} selector ${k}`).toBe(v);
    }
    const jmSelector = jobMaster.spec.selector.matchLabels;
    const tmLabels = taskManager.spec.template.metadata.labels;
    expect(
      Object.entries(jmSelector).every(([k, v]) => tmLabels[k] === v),
      'the job master selector must not select task managers',
    ).toBe(false);
  });
});

describe('deploy/kubernetes: wiring', () => {
  it('runs two job masters of the job module with --ha and --listen at the pod IP', () => {
    expect(jobMaster.spec.replicas).toBe(2);
    expect(jmArgs[0]).toBe('run');
    expect(flagValue(jmArgs, '--ha')).toBe('$(WEIR_HA_URL)');
    const listen = flagValue(jmArgs, '--listen');
    expect(listen).toMatch(/^\$\(POD_IP\):\d+$/);
    expect(envOf(jmContainer, 'POD_IP').valueFrom.fieldRef.fieldPath).toBe('status.podIP');
    const port = Number(listen.split(':')[1]);
    expect(jmContainer.ports.map((p: Manifest) => p.containerPort)).toContain(port);
    // a rolling update would wait forever for a standby to become Ready
    expect(jobMaster.spec.strategy.type).toBe('Recreate');
  });

  it('runs weir run as the image entrypoint: the pod SIGTERM reaches it, and a leader steps down on it (a standby takes over)', () => {
    expect(jmContainer.command, 'no wrapper: weir run gets the signal itself').toBeUndefined();
    expect(jmArgs[0]).toBe('run');
  });

  it('loads the job module from the weir-job ConfigMap, mounted inside the image package directory', () => {
    const module = jmArgs[1]!;
    const mount = jmContainer.volumeMounts.find((m: Manifest) => module.startsWith(`${m.mountPath}/`));
    expect(mount, `a volume mounted above ${module}`).toBeDefined();
    const volume = jobMaster.spec.template.spec.volumes.find((v: Manifest) => v.name === mount.name);
    expect(volume.configMap.name).toBe('weir-job');
    expect(path.posix.basename(module)).toBe('job.ts');
    // 'weir-stream' resolves from the job module as a self-reference of the package at WORKDIR
    const workdir = /^WORKDIR (\S+)$/m.exec(lastStage(readFileSync(path.join(REPO, 'deploy/Dockerfile'), 'utf8')))![1]!;
    expect(module.startsWith(`${workdir}/`)).toBe(true);
  });

  it('starts task managers that join the same job through the HA store, reachable at their pod IP', () => {
    expect(tmArgs[0]).toBe('taskmanager');
    expect(flagValue(tmArgs, '--ha')).toBe('$(WEIR_HA_URL)');
    expect(flagValue(tmArgs, '--ha-job')).toBe(flagValue(jmArgs, '--ha-job'));
    expect(flagValue(tmArgs, '--data-host')).toBe('$(POD_IP)');
    expect(envOf(tmContainer, 'POD_IP').valueFrom.fieldRef.fieldPath).toBe('status.podIP');
    expect(tmContainer.ports.map((p: Manifest) => p.containerPort)).toContain(Number(flagValue(tmArgs, '--data-port')));
    expect(taskManager.spec.replicas).toBe(Number(flagValue(jmArgs, '--task-managers')));
  });

  it('takes the cluster token and the HA store URL from Secrets, in both Deployments', () => {
    const secrets = manifests.filter((m) => m.doc.kind === 'Secret').map((m) => m.doc);
    const keyOf = (name: string) =>
      Object.keys({ ...secrets.find((s) => s.metadata.name === name)?.stringData, ...secrets.find((s) => s.metadata.name === name)?.data });
    for (const c of [jmContainer, tmContainer]) {
      const token = envOf(c, 'WEIR_CLUSTER_TOKEN');
      expect(token.value, 'no literal token').toBeUndefined();
      expect(keyOf(token.valueFrom.secretKeyRef.name)).toContain(token.valueFrom.secretKeyRef.key);
      const url = envOf(c, 'WEIR_HA_URL');
      expect(url.value, 'no literal URL (it holds the password)').toBeUndefined();
      expect(keyOf(url.valueFrom.secretKeyRef.name)).toContain(url.valueFrom.secretKeyRef.key);
      expect(c.args).not.toContain('--token-file');
    }
  });

  it('puts the checkpoint directory on one ReadWriteMany claim, mounted at the same path in both', () => {
    const dir = flagValue(jmArgs, '--checkpoint-dir');
    const claimAt = (d: Manifest, c: Manifest): string => {
      const mount = c.volumeMounts.find((m: Manifest) => m.mountPath === dir);
      expect(mount, `${d.metadata.name} mounts ${dir}`).toBeDefined();
      expect(mount.readOnly ?? false).toBe(false);
      return d.spec.template.spec.volumes.find((v: Manifest) => v.name === mount.name).persistentVolumeClaim.claimName;
    };
    const claim = claimAt(jobMaster, jmContainer);
    expect(claimAt(taskManager, tmContainer)).toBe(claim);
    const pvc = manifests.find((m) => m.doc.kind === 'PersistentVolumeClaim' && m.doc.metadata.name === claim)!.doc;
    expect(pvc.spec.accessModes).toEqual(['ReadWriteMany']);
  });

  it('marks only the leader Ready and probes liveness over HTTP: /readyz and /healthz on the --web-port, bound on every address (--web-host)', () => {
    const web = jmContainer.ports.find((p: Manifest) => p.name === 'web');
    expect(String(web.containerPort)).toBe(flagValue(jmArgs, '--web-port'));
    expect(flagValue(jmArgs, '--web-host')).toBe('0.0.0.0');
    expect(jmContainer.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'web' });
    expect(jmContainer.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'web' });
  });

  it('defines every $(VAR) the args use, and gives every container requests and limits', () => {
    for (const c of [jmContainer, tmContainer]) {
      const defined = new Set((c.env ?? []).map((e: Manifest) => e.name));
      for (const arg of c.args) for (const [, name] of arg.matchAll(/\$\((\w+)\)/g)) expect(defined.has(name), `${c.name}: $(${name})`).toBe(true);
      for (const kind of ['requests', 'limits']) for (const r of ['cpu', 'memory']) expect(c.resources[kind][r], `${c.name} ${kind}.${r}`).toBeDefined();
    }
  });
});

/** The last stage of a Dockerfile (after its last FROM). */
function lastStage(dockerfile: string): string {
  return dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
}

describe('deploy/kubernetes: the CLI', () => {
  let runHelp = '';
  let tmHelp = '';
  beforeAll(async () => {
    const bin = path.join(REPO, 'bin/weir.mjs');
    const help = async (command: string): Promise<string> => (await exec(process.execPath, [bin, command, '--help'], { cwd: REPO })).stdout;
    [runHelp, tmHelp] = [await help('run'), await help('taskmanager')];
  });

  it('knows every flag the job masters give to weir run', () => {
    expect(runHelp).toContain('Usage: weir run');
    const flags = jmArgs.filter((a) => a.startsWith('-'));
    expect(flags.length).toBeGreaterThan(5);
    expect(flags.filter((f) => !helpHas(runHelp, f))).toEqual([]);
  });

  it('knows every flag the task managers give to weir taskmanager', () => {
    expect(tmHelp).toContain('Usage: weir taskmanager');
    const flags = tmArgs.filter((a) => a.startsWith('-'));
    expect(flags.length).toBeGreaterThan(4);
    expect(flags.filter((f) => !helpHas(tmHelp, f))).toEqual([]);
  });

  it('the drift check itself refuses a flag weir does not have', () => {
    expect(helpHas(runHelp, '--ha')).toBe(true);
    expect(helpHas(runHelp, '--ha-leader')).toBe(false);
    expect(helpHas(tmHelp, '--listen')).toBe(false);
  });
});

describe('deploy/Dockerfile', () => {
  const dockerfile = readFileSync(path.join(REPO, 'deploy/Dockerfile'), 'utf8');
  const runtime = lastStage(dockerfile);
  const pkg = JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as {
    files: string[];
    bin: Record<string, string>;
    devDependencies: Record<string, string>;
    peerDependencies: Record<string, string>;
  };

  it('builds on node:20-slim, installs production dependencies from the lockfile and runs bin/weir.mjs', () => {
    expect(dockerfile.match(/^FROM (\S+)/gm)?.every((f) => f.startsWith('FROM node:20-slim'))).toBe(true);
    expect(runtime).toMatch(/npm ci --omit=dev/);
    expect(runtime).toContain(`ENTRYPOINT ["node", "/opt/weir/${pkg.bin.weir}"]`);
    expect(jmContainer.command, 'job masters use the image entrypoint').toBeUndefined();
    expect(tmContainer.command, 'task managers use the image entrypoint').toBeUndefined();
  });

  it('copies what the published package holds (package.json "files")', () => {
    for (const entry of pkg.files.filter((f) => !f.startsWith('!')))
      expect(runtime, entry).toMatch(new RegExp(`^COPY .*\\b${entry.replace('.', '\\.')}\\b`, 'm'));
  });

  it('installs the pg the repository tests with (needed by --ha), within the peer range', () => {
    const packages = /^ARG JOB_PACKAGES="([^"]*)"$/m.exec(runtime)?.[1]?.split(/\s+/) ?? [];
    const pg = packages.find((p) => p.startsWith('pg@'));
    expect(pg).toBe(`pg@${pkg.devDependencies.pg}`);
    expect(pkg.peerDependencies.pg).toBe(`^${pkg.devDependencies.pg}`);
  });

  it('keeps nothing the build copies out of the context (.dockerignore)', () => {
    const ignored = readFileSync(path.join(REPO, '.dockerignore'), 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('#'));
    const copied = [...dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((m) => m[1]!.split(/\s+/));
    expect(copied.length).toBeGreaterThan(5);
    for (const src of copied)
      expect(
        ignored.filter((i) => src === i || src.startsWith(`${i}/`)),
        src,
      ).toEqual([]);
  });
});
