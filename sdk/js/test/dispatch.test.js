// The exports as the host calls them: the contract's shapes in, the contract's shapes out.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  BootstrapFormat, ClusterState, ControlPlaneShape, Deletion, HookResponse, InProgress, KubernetesVersion,
  MachinePhase, ProviderError, ErrorCode, SecretsState, Step, condition, defineProvider,
} from '../src/index.js';
import { callSource, exports } from '../src/testing.js';

const schema = {
  type: 'object',
  additionalProperties: false,
  properties: { region: { type: 'string', default: 'eu-1' }, fail: { type: 'boolean', default: false } },
};

/** Serves every point, answering from its config and input. */
const everything = defineProvider({
  name: 'everything',
  version: '1.2.3',
  description: 'Answers every call.',
  configSchema: schema,
  requestedGrants: { httpHosts: ['api.example.test'], secrets: ['token'] },
  validate: (config) => (config.region === 'nowhere' ? [{ path: '/region', message: 'no such region' }] : []),
  infrastructure: {
    reconcileCluster: (ctx) => ClusterState.ready({ controlPlaneEndpoint: { host: `${ctx.cluster.name}.${ctx.config.region}`, port: 6443 } }),
    deleteCluster: () => Deletion.inProgress(new InProgress('Deleting', 'load balancer').requeueAfter(2000)),
    reconcileMachine: (ctx, spec) => ({
      phase: MachinePhase.Running,
      providerId: `sim://${ctx.idempotencyKey}`,
      addresses: [{ kind: 'internal-ip', address: '10.0.0.1' }],
      message: `${spec.machine.name} ${spec.version}`,
    }),
    deleteMachine: () => Deletion.deleted,
    listMachines: () => [{ idempotencyKey: 'k', providerId: 'p', machineName: 'm', phase: 'running' }],
  },
  bootstrap: {
    clusterSecrets: () => SecretsState.ready([{ name: 'token', data: 'abc' }]),
    generate: (ctx, request) => ({ format: BootstrapFormat.CloudConfig, data: `#cloud-config ${request.role} ${request.version}` }),
    // kubeconfig left out: unsupported.
  },
  controlPlane: {
    shape: ControlPlaneShape.Machines,
    scalable: true,
    plan: (ctx, input) => ({
      step: input.members.length === 0
        ? Step.createMachine({ init: true, version: input.version })
        : Step.wait(new InProgress('Booting', 'a machine boots')),
      status: { initialized: false, ready: false, conditions: [condition('Scaling', true, 'ScalingUp')] },
      replicas: input.members.length,
      readyReplicas: 0,
      upToDateReplicas: 0,
    }),
  },
  lifecycleHooks: {
    async handle(ctx, request) {
      if (ctx.config.fail) {
        throw ProviderError.retryable(ErrorCode.Unavailable, 'backend down').retryAfter(3000);
      }
      await null;
      return request.fromVersion === undefined
        ? HookResponse.proceed
        : HookResponse.hold(new InProgress('Upgrading', `${request.fromVersion} to ${request.toVersion}`).requeueAfter(1000));
    },
  },
});

/** Serves lifecycle hooks only. */
const hooksOnly = defineProvider({
  name: 'hooks-only',
  version: '0.1.0',
  description: 'Lets everything proceed.',
  lifecycleHooks: { handle: () => HookResponse.proceed },
});

const v = (minor) => ({ major: 1, minor, patch: 0 });
const source = (config = {}, call = {}) => callSource(config, call);

test('describe answers the definition in the contract shape', () => {
  assert.deepEqual(exports(everything).metadata.describe(), {
    name: 'everything',
    version: '1.2.3',
    description: 'Answers every call.',
    extensionPoints: ['infrastructure', 'bootstrap', 'control-plane', 'lifecycle-hooks'],
    configSchema: JSON.stringify(schema),
    capabilities: { controlPlaneShape: 'machines', controlPlaneScalable: true, versionUpgrades: false, chainsUpgrades: false },
    requestedGrants: { httpHosts: ['api.example.test'], secrets: ['token'] },
  });
  const hooks = exports(hooksOnly).metadata.describe();
  assert.deepEqual(hooks.extensionPoints, ['lifecycle-hooks']);
  assert.equal(hooks.capabilities.controlPlaneShape, undefined);
  assert.equal(hooks.configSchema, '{"type":"object","additionalProperties":false}');
});

test('validate-config answers ok, or every problem at its pointer', () => {
  const { metadata } = exports(everything);
  assert.deepEqual(metadata.validateConfig('{}'), { tag: 'ok', val: undefined });
  assert.deepEqual(metadata.validateConfig('{"region": 5, "x": 1}'), {
    tag: 'err',
    val: [{ path: '/region', message: 'must be a string' }, { path: '/x', message: 'unknown field' }],
  });
  assert.deepEqual(metadata.validateConfig('{"region": "nowhere"}'), { tag: 'err', val: [{ path: '/region', message: 'no such region' }] });
  assert.equal(metadata.validateConfig('{ this is not JSON').tag, 'err');
});

test('points and methods left out answer unsupported without reading the config', async () => {
  for (const call of [
    (e, s) => e.infrastructure.listMachines(s),
    (e, s) => e.bootstrap.clusterSecrets(s),
    (e, s) => e.controlPlane.plan(s, { version: v(35), replicas: 1, members: [], failureDomains: [] }),
  ]) {
    const s = source('{ this is not JSON');
    const answer = await call(exports(hooksOnly), s);
    assert.equal(answer.tag, 'err');
    assert.equal(answer.val.code, 'unsupported');
    assert.equal(answer.val.retryable, false);
    assert.equal(s.reads.config, 0);
  }
  const answer = await exports(everything).bootstrap.kubeconfig(source(), { host: 'h', port: 1 }, []);
  assert.deepEqual(answer.val, {
    code: 'unsupported', message: 'bootstrap.kubeconfig is not supported by this provider', retryable: false, retryAfterMs: undefined,
  });
});

test('a config that is not JSON, or breaks the schema, is permanent invalid input', async () => {
  const request = { hook: 'before-cluster-create', fromVersion: undefined, toVersion: v(35) };
  for (const config of ['{ this is not JSON', '{"region": 5}']) {
    const answer = await exports(everything).lifecycleHooks.handle(source(config), request);
    assert.equal(answer.tag, 'err');
    assert.equal(answer.val.code, 'invalid-input');
    assert.equal(answer.val.retryable, false);
  }
});

test('hooks: proceed, hold and a thrown error with its retry hint', async () => {
  const { lifecycleHooks } = exports(everything);
  assert.deepEqual(await lifecycleHooks.handle(source(), { hook: 'before-cluster-create', fromVersion: undefined, toVersion: v(35) }),
    { tag: 'ok', val: { tag: 'proceed' } });
  assert.deepEqual(await lifecycleHooks.handle(source(), { hook: 'before-cluster-upgrade', fromVersion: v(34), toVersion: v(35) }), {
    tag: 'ok',
    val: { tag: 'hold', val: { reason: 'Upgrading', message: 'v1.34.0 to v1.35.0', requeueAfterMs: 1000, conditions: [] } },
  });
  assert.deepEqual(await lifecycleHooks.handle(source({ fail: true }), { hook: 'before-cluster-delete', fromVersion: undefined, toVersion: v(35) }), {
    tag: 'err',
    val: { code: 'unavailable', message: 'backend down', retryable: true, retryAfterMs: 3000 },
  });
});

test('infrastructure answers in the contract shape, with the context read on demand', async () => {
  const { infrastructure } = exports(everything);
  const s = source({}, { cluster: { namespace: 'n', name: 'c2', uid: 'u' }, idempotencyKey: 'key-9' });
  assert.deepEqual(await infrastructure.reconcileCluster(s), {
    tag: 'ok',
    val: { tag: 'ready', val: { controlPlaneEndpoint: { host: 'c2.eu-1', port: 6443 }, failureDomains: [], conditions: [] } },
  });
  assert.deepEqual(s.reads, { cluster: 1, config: 1, idempotencyKey: 0, remainingMs: 0 });
  assert.deepEqual(await infrastructure.deleteCluster(s), {
    tag: 'ok', val: { tag: 'in-progress', val: { reason: 'Deleting', message: 'load balancer', requeueAfterMs: 2000, conditions: [] } },
  });
  const spec = {
    machine: { name: 'm1', uid: 'u1' }, role: 'worker', pool: 'md-0', version: v(35), failureDomain: undefined, bootstrapData: new Uint8Array(),
  };
  assert.deepEqual(await infrastructure.reconcileMachine(s, spec), {
    tag: 'ok',
    val: {
      providerId: 'sim://key-9', phase: 'running', addresses: [{ kind: 'internal-ip', address: '10.0.0.1' }],
      failureDomain: undefined, message: 'm1 v1.35.0', requeueAfterMs: undefined, conditions: [],
    },
  });
  assert.deepEqual(await infrastructure.deleteMachine(s, { name: 'm1', uid: 'u1' }), { tag: 'ok', val: { tag: 'deleted' } });
  assert.deepEqual((await infrastructure.listMachines(s)).val, [{ idempotencyKey: 'k', providerId: 'p', machineName: 'm', phase: 'running' }]);
});

test('bootstrap sends text as UTF-8 bytes', async () => {
  const { bootstrap } = exports(everything);
  const secrets = await bootstrap.clusterSecrets(source());
  assert.deepEqual(secrets, { tag: 'ok', val: { tag: 'ready', val: [{ name: 'token', data: new TextEncoder().encode('abc') }] } });
  const request = {
    machine: { name: 'm', uid: 'u' }, role: 'init', version: v(35), endpoint: { host: 'h', port: 6443 }, secrets: [], controlPlaneMembers: [],
  };
  const data = await bootstrap.generate(source(), request);
  assert.equal(data.val.format, 'cloud-config');
  assert.equal(new TextDecoder().decode(data.val.data), '#cloud-config init v1.35.0');
});

test('control plane: steps and status in the contract shape', async () => {
  const { controlPlane } = exports(everything);
  const input = { version: v(35), replicas: 3, members: [], failureDomains: [], endpoint: undefined };
  assert.deepEqual(await controlPlane.plan(source(), input), {
    tag: 'ok',
    val: {
      step: { tag: 'create-machine', val: { init: true, version: v(35), failureDomain: undefined } },
      status: {
        initialized: false, ready: false, version: undefined, endpoint: undefined,
        conditions: [{ type: 'Scaling', status: 'true', reason: 'ScalingUp', message: '' }], failuresTolerated: undefined,
      },
      replicas: 0, readyReplicas: 0, upToDateReplicas: 0, certificates: [], sharedDatastore: undefined,
    },
  });
  const member = { machine: { name: 'm0', uid: 'u0' }, version: v(35), failureDomain: undefined, ready: false, createdAt: 1n, deleting: false };
  const waiting = await controlPlane.plan(source(), { ...input, members: [member] });
  assert.equal(waiting.val.step.tag, 'wait');
  assert.equal(waiting.val.step.val.requeueAfterMs, 5000);
});

test('a malformed answer is a permanent internal error naming the field, not a trap', async () => {
  const broken = defineProvider({
    name: 'broken',
    version: '0.1.0',
    description: 'Answers nonsense.',
    infrastructure: {
      reconcileCluster: () => ClusterState.ready({ controlPlaneEndpoint: { host: 'h', port: 70000 } }),
      reconcileMachine: () => ({ phase: 'exploded' }),
      listMachines: () => { throw new TypeError('x is undefined'); },
    },
    controlPlane: { shape: 'hosted', plan: () => ({ step: { kind: 'teleport' } }) },
    lifecycleHooks: { handle: () => ({ tag: 'proceed' }) },
  });
  const e = exports(broken);
  const port = await e.infrastructure.reconcileCluster(source());
  assert.equal(port.val.code, 'internal');
  assert.equal(port.val.retryable, false);
  assert.match(port.val.message, /reconcileCluster\.controlPlaneEndpoint\.port: must be a whole number from 0 to 65535, got 70000/);
  assert.match((await e.infrastructure.reconcileMachine(source(), { version: v(35) })).val.message, /reconcileMachine\.phase: must be one of/);
  assert.match((await e.controlPlane.plan(source(), { version: v(35), members: [] })).val.message, /plan\.step: must be one of Step\.none/);
  assert.match((await e.lifecycleHooks.handle(source(), { hook: 'before-cluster-create', toVersion: v(35) })).val.message, /HookResponse\.proceed/);
  // A plain exception is a retryable internal error: the host backs off.
  assert.deepEqual((await e.infrastructure.listMachines(source())).val, { code: 'internal', message: 'x is undefined', retryable: true, retryAfterMs: undefined });
});

test('a definition the host would refuse fails where it is written', () => {
  const base = { name: 'p', version: '0.1.0', description: 'd', lifecycleHooks: {} };
  assert.throws(() => defineProvider({ ...base, name: 'My Provider' }), /name must be short and lowercase/);
  assert.throws(() => defineProvider({ ...base, name: 'a'.repeat(64) }), /1-63/);
  assert.equal(defineProvider({ ...base, name: 'a'.repeat(63) }).name, 'a'.repeat(63));
  assert.throws(() => defineProvider({ ...base, version: '1.0' }), /semantic version/);
  assert.throws(() => defineProvider({ ...base, description: 'two\nlines' }), /one line/);
  assert.throws(() => defineProvider({ ...base, lifecycleHooks: undefined }), /serves no extension point/);
  assert.throws(() => defineProvider({ ...base, controlPlane: { plan() {} } }), /controlPlane\.shape must be one of machines, hosted, managed/);
  assert.throws(() => defineProvider({ ...base, configSchema: { anyOf: [] } }), /`anyOf` is not checked/);
});

test('class instances serve a point, methods on their prototype', async () => {
  class Hooks {
    constructor() { this.reason = 'Waiting'; }
    handle() { return HookResponse.hold(new InProgress(this.reason, 'for the test')); }
  }
  const p = defineProvider({ name: 'classy', version: '0.1.0', description: 'd', lifecycleHooks: new Hooks() });
  const answer = await exports(p).lifecycleHooks.handle(source(), { hook: 'before-cluster-create', toVersion: v(35) });
  assert.equal(answer.val.val.reason, 'Waiting');
  assert.equal(new KubernetesVersion(1, 35, 2).toString(), 'v1.35.2');
});
