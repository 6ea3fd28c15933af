// The control plane's additions of contract 0.3: etcd membership and the members' judgements,
// the hosted shape's objects, certificates and shared datastore, the capability to chain
// upgrades, and the managed shape's reconcileControlPlane and deleteControlPlane.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  CertificateAuthority, CertificateUsage, ClusterState, ControlPlaneShape, Deletion, EtcdMembership, InProgress,
  SecretMaterial, Step, defineProvider,
} from '../src/index.js';
import * as testing from '../src/testing.js';

const status = { initialized: true, ready: true };
const counts = { replicas: 0, readyReplicas: 0, upToDateReplicas: 0 };

test('Step.removeMember takes a member etcd lists out of etcd first, any other by its machine', () => {
  const m = testing.machine('m0');
  assert.deepEqual(Step.removeMember(testing.member('m0', { etcd: EtcdMembership.Member })), Step.removeEtcdMember(m));
  assert.deepEqual(Step.removeMember(testing.member('m0', { etcd: EtcdMembership.NotMember })), Step.deleteMachine(m));
  assert.deepEqual(Step.removeMember(testing.member('m0')), Step.deleteMachine(m));
});

test('plan sees the members\' etcd, out-of-date and unhealthy judgements, and the hosted objects, frozen', async () => {
  let seen;
  const p = defineProvider({
    name: 'seer', version: '0.1.0', description: 'd',
    controlPlane: { shape: ControlPlaneShape.Hosted, plan: (ctx, input) => { seen = input; return { step: Step.none, status, ...counts }; } },
  });
  const input = {
    version: { major: 1, minor: 35, patch: 1 }, replicas: 0, failureDomains: [], endpoint: undefined, failuresTolerated: 1,
    members: [{
      machine: testing.machine('m0'), version: { major: 1, minor: 34, patch: 0 }, failureDomain: 'a', ready: true, createdAt: 7n,
      deleting: false, etcd: 'member', outOfDate: ['version'], unhealthy: ['NodeNotReady for 5m'],
    }],
    objects: [{
      apiVersion: 'apps/v1', kind: 'Deployment', name: 'c1-apiserver', ready: false, message: '0 of 1 available',
      images: ['registry.k8s.io/kube-apiserver:v1.35.1'], addresses: [],
    }],
  };
  assert.equal((await testing.exports(p).controlPlane.plan(testing.callSource(), input)).tag, 'ok');
  assert.equal(String(seen.version), 'v1.35.1');
  assert.equal(String(seen.members[0].version), 'v1.34.0');
  assert.deepEqual([seen.members[0].etcd, seen.members[0].outOfDate, seen.members[0].unhealthy], ['member', ['version'], ['NodeNotReady for 5m']]);
  assert.equal(seen.failuresTolerated, 1);
  assert.equal(seen.objects[0].images[0], 'registry.k8s.io/kube-apiserver:v1.35.1');
  for (const frozen of [seen, seen.members, seen.members[0], seen.members[0].outOfDate, seen.objects, seen.objects[0].images]) {
    assert.ok(Object.isFrozen(frozen));
  }
  // An input without the 0.3 fields reads as a 0.2 host's would: etcd unknown, nothing judged.
  await testing.exports(p).controlPlane.plan(testing.callSource(), { version: testing.version(35), replicas: 1, members: [{ ...input.members[0], etcd: undefined, outOfDate: undefined, unhealthy: undefined }], failureDomains: [] });
  assert.deepEqual([seen.members[0].etcd, seen.members[0].outOfDate, seen.members[0].unhealthy, seen.objects], ['unknown', [], [], []]);
});

test('testing builds members and inputs as plan sees them', () => {
  const m = testing.member('m1', { createdAt: 5, etcd: EtcdMembership.Member });
  assert.deepEqual(m, {
    machine: { name: 'm1', uid: 'uid-m1' }, version: testing.version(35), failureDomain: undefined, ready: true, createdAt: 5n,
    deleting: false, etcd: 'member', outOfDate: [], unhealthy: [],
  });
  const input = testing.planInput({ replicas: 3, members: [m] });
  assert.equal(input.replicas, 3);
  assert.equal(input.members[0].createdAt, 5n);
  assert.deepEqual([input.failureDomains, input.objects, input.endpoint, input.failuresTolerated], [[], [], undefined, undefined]);
  assert.ok(Object.isFrozen(input) && Object.isFrozen(input.members[0]));
});

test('a hosted plan\'s certificates, shared datastore and failures tolerated in the contract shape', async () => {
  const p = defineProvider({
    name: 'hosted', version: '0.1.0', description: 'd',
    controlPlane: {
      shape: ControlPlaneShape.Hosted,
      plan: (ctx) => ({
        step: Step.applyManifests([`kind: Service\nmetadata: {name: ${ctx.cluster.name}-apiserver}\n`]),
        status: { ...status, failuresTolerated: 0 },
        ...counts,
        certificates: [{
          name: `${ctx.cluster.name}-certs`,
          certificates: [
            { key: 'apiserver', authority: CertificateAuthority.Cluster, usage: CertificateUsage.Server, commonName: 'kube-apiserver', sans: ['10.0.0.1'] },
            { key: 'admin', authority: CertificateAuthority.Cluster, usage: CertificateUsage.Client, commonName: 'admin', organizations: ['system:masters'], kubeconfigServer: 'https://10.0.0.1:6443' },
          ],
          materials: [SecretMaterial.ClusterCaCertificate, SecretMaterial.ServiceAccountKeys],
        }],
        sharedDatastore: { name: 'shared-etcd', secret: `${ctx.cluster.name}-datastore` },
      }),
    },
  });
  const answer = await testing.exports(p).controlPlane.plan(testing.callSource(), testing.planInput());
  assert.deepEqual(answer.val.status.failuresTolerated, 0);
  assert.deepEqual(answer.val.certificates, [{
    name: 'c1-certs',
    certificates: [
      { key: 'apiserver', authority: 'cluster', usage: 'server', commonName: 'kube-apiserver', organizations: [], sans: ['10.0.0.1'], kubeconfigServer: undefined },
      { key: 'admin', authority: 'cluster', usage: 'client', commonName: 'admin', organizations: ['system:masters'], sans: [], kubeconfigServer: 'https://10.0.0.1:6443' },
    ],
    materials: ['cluster-ca-certificate', 'service-account-keys'],
  }]);
  assert.deepEqual(answer.val.sharedDatastore, { name: 'shared-etcd', secret: 'c1-datastore' });

  const broken = defineProvider({
    name: 'broken', version: '0.1.0', description: 'd',
    controlPlane: {
      shape: ControlPlaneShape.Hosted,
      plan: () => ({ step: Step.none, status, ...counts, certificates: [{ name: 'c1-x', certificates: [{ key: 'k', authority: 'root', usage: 'server', commonName: 'x' }] }] }),
    },
  });
  const refused = await testing.exports(broken).controlPlane.plan(testing.callSource(), testing.planInput());
  assert.match(refused.val.message, /plan\.certificates\[0\]\.certificates\[0\]\.authority: must be one of cluster, front-proxy, etcd/);
});

/** A managed control plane: created in one wait, then ready with its access; deleted in one. */
const managed = defineProvider({
  name: 'managed', version: '0.1.0', description: 'd',
  controlPlane: {
    shape: ControlPlaneShape.Managed,
    scalable: true,
    versionUpgrades: true,
    chainsUpgrades: true,
    plan: () => ({ step: Step.none, status, ...counts }),
    reconcileControlPlane: async (ctx, input) => (input.replicas === 0
      ? { plan: { step: Step.wait(new InProgress('Creating', 'the service creates it')), status: { initialized: false, ready: false }, ...counts } }
      : {
        plan: { step: Step.none, status: { ...status, version: input.version, endpoint: { host: 'api.svc', port: 443 } }, ...counts },
        access: {
          endpoint: { host: 'api.svc', port: 443 },
          caCertificate: '-----BEGIN CERTIFICATE-----\n...',
          adminKubeconfig: 'apiVersion: v1\nkind: Config\n',
          joinToken: { item: 'join', id: 'abcdef', secret: '0123456789abcdef', ttlSeconds: 3600, extraGroups: [] },
        },
      }),
    deleteControlPlane: (ctx) => (ctx.cluster.name === 'gone' ? Deletion.deleted : Deletion.inProgress(new InProgress('Deleting', 'the service deletes it'))),
  },
});

test('describe declares the capability to chain upgrades', () => {
  assert.deepEqual(testing.exports(managed).metadata.describe().capabilities, {
    controlPlaneShape: 'managed', controlPlaneScalable: true, versionUpgrades: true, chainsUpgrades: true,
  });
});

test('reconcileControlPlane answers the plan and the access in the contract shape', async () => {
  const { controlPlane } = testing.exports(managed);
  const waiting = await controlPlane.reconcileControlPlane(testing.callSource(), testing.planInput({ replicas: 0 }));
  assert.equal(waiting.val.plan.step.tag, 'wait');
  assert.equal(waiting.val.access, undefined);
  const ready = await controlPlane.reconcileControlPlane(testing.callSource(), testing.planInput({ replicas: 1 }));
  assert.deepEqual(ready.val.plan.step, { tag: 'none' });
  assert.deepEqual(ready.val.plan.status.version, { major: 1, minor: 35, patch: 0 });
  assert.deepEqual(ready.val.access, {
    endpoint: { host: 'api.svc', port: 443 },
    caCertificate: '-----BEGIN CERTIFICATE-----\n...',
    adminKubeconfig: 'apiVersion: v1\nkind: Config\n',
    joinToken: { item: 'join', id: 'abcdef', secret: '0123456789abcdef', ttlSeconds: 3600n, extraGroups: [] },
  });
});

test('reconcileControlPlane answers none or wait: a machine step is malformed', async () => {
  const p = defineProvider({
    name: 'machine-step', version: '0.1.0', description: 'd',
    controlPlane: {
      shape: ControlPlaneShape.Managed,
      reconcileControlPlane: () => ({ plan: { step: Step.createMachine({ init: true, version: 'v1.35.0' }), status, ...counts } }),
    },
  });
  const answer = await testing.exports(p).controlPlane.reconcileControlPlane(testing.callSource(), testing.planInput());
  assert.equal(answer.val.code, 'internal');
  assert.match(answer.val.message, /reconcileControlPlane\.plan\.step: must be Step\.none or Step\.wait\(\.\.\.\), got create-machine/);
  const noPlan = defineProvider({ name: 'no-plan', version: '0.1.0', description: 'd', controlPlane: { shape: 'managed', reconcileControlPlane: () => ({}) } });
  assert.match((await testing.exports(noPlan).controlPlane.reconcileControlPlane(testing.callSource(), testing.planInput())).val.message,
    /reconcileControlPlane\.plan: must answer a PlanOutput/);
});

test('deleteControlPlane answers deleted or in progress', async () => {
  const { controlPlane } = testing.exports(managed);
  assert.equal((await controlPlane.deleteControlPlane(testing.callSource())).val.tag, 'in-progress');
  const gone = testing.callSource({}, { cluster: testing.cluster('default', 'gone') });
  assert.deepEqual(await controlPlane.deleteControlPlane(gone), { tag: 'ok', val: { tag: 'deleted' } });
});

test('a machines control plane leaves both out and answers them unsupported', async () => {
  const p = defineProvider({
    name: 'machines', version: '0.1.0', description: 'd',
    controlPlane: { shape: ControlPlaneShape.Machines, plan: () => ({ step: Step.none, status, ...counts }) },
  });
  const { controlPlane, metadata } = testing.exports(p);
  assert.equal(metadata.describe().capabilities.chainsUpgrades, false);
  for (const [answer, what] of [
    [await controlPlane.reconcileControlPlane(testing.callSource(), testing.planInput()), 'control-plane.reconcile-control-plane'],
    [await controlPlane.deleteControlPlane(testing.callSource()), 'control-plane.delete-control-plane'],
  ]) {
    assert.deepEqual(answer, {
      tag: 'err', val: { code: 'unsupported', message: `${what} is not supported by this provider`, retryable: false, retryAfterMs: undefined },
    });
  }
});

test('an infrastructure for a service\'s control plane answers no endpoint', async () => {
  const p = defineProvider({
    name: 'network-only', version: '0.1.0', description: 'd',
    infrastructure: { reconcileCluster: () => ClusterState.ready({ failureDomains: [{ name: 'a', controlPlane: false }] }) },
  });
  assert.deepEqual(await testing.exports(p).infrastructure.reconcileCluster(testing.callSource()), {
    tag: 'ok', val: { tag: 'ready', val: { controlPlaneEndpoint: undefined, failureDomains: [{ name: 'a', controlPlane: false }], conditions: [] } },
  });
});
