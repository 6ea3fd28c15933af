// examples/every-point answers what the conformance suite expects, natively.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { EtcdMembership } from '../src/index.js';
import * as testing from '../src/testing.js';
import { TOKEN_ITEM, provider } from '../examples/every-point/provider.js';

const plan = (input) => testing.exports(provider).controlPlane.plan(testing.callSource(), testing.planInput(input));

test('every-point declares every extension point and a machines control plane', () => {
  const d = testing.exports(provider).metadata.describe();
  assert.deepEqual(d.extensionPoints, ['infrastructure', 'bootstrap', 'control-plane', 'lifecycle-hooks']);
  assert.deepEqual(d.capabilities, { controlPlaneShape: 'machines', controlPlaneScalable: true, versionUpgrades: false, chainsUpgrades: false });
  testing.assertAccepted(provider, {});
  testing.assertRefusedAt(provider, { domain: 'Not A Domain' }, ['/domain']);
});

test('every-point takes the oldest member out of etcd when etcd lists it, else deletes its machine', async () => {
  const members = (etcd) => [testing.member('m1', { createdAt: 20, etcd }), testing.member('m0', { createdAt: 10, etcd })];
  const listed = await plan({ replicas: 1, members: members(EtcdMembership.Member) });
  assert.deepEqual(listed.val.step, { tag: 'remove-etcd-member', val: { name: 'm0', uid: 'uid-m0' } });
  assert.deepEqual([listed.val.replicas, listed.val.readyReplicas], [2, 2]);
  for (const etcd of [EtcdMembership.NotMember, EtcdMembership.Unknown]) {
    assert.deepEqual((await plan({ replicas: 1, members: members(etcd) })).val.step, { tag: 'delete-machine', val: { name: 'm0', uid: 'uid-m0' } });
  }
});

test('every-point reads failuresTolerated as 2F+1 members, and counts the out-of-date ones', async () => {
  const three = ['m0', 'm1', 'm2'].map((name, i) => testing.member(name, { createdAt: i, outOfDate: i === 0 ? ['version'] : [] }));
  const grow = await plan({ replicas: 0, failuresTolerated: 2, members: three });
  assert.equal(grow.val.step.tag, 'create-machine');
  assert.equal(grow.val.status.failuresTolerated, 1);
  assert.equal(grow.val.upToDateReplicas, 2);
  assert.deepEqual((await plan({ replicas: 0, failuresTolerated: 1, members: three })).val.step, { tag: 'none' });
});

test('every-point keeps its join token in the cluster\'s secrets and renews it', async () => {
  const ctx = testing.context(provider);
  const { items } = await provider.points.bootstrap.clusterSecrets(ctx);
  assert.deepEqual(items.map((i) => i.name), [TOKEN_ITEM]);
  assert.match(items[0].data, /^[a-z0-9]{6}\.[a-z0-9]{16}$/);
  const { current, renewed } = await testing.assertJoinTokenRenews(provider, items);
  assert.equal(current.ttlSeconds, 86_400n);
  assert.notEqual(renewed.secret, current.secret);

  const request = {
    machine: testing.machine('w0'), role: 'worker', version: testing.version(35), endpoint: { host: 'h', port: 6443 },
    secrets: items.map((i) => ({ name: i.name, data: new TextEncoder().encode(i.data) })), controlPlaneMembers: [], join: undefined,
  };
  const { bootstrap } = testing.exports(provider);
  const data = new TextDecoder().decode((await bootstrap.generate(testing.callSource(), request)).val.data);
  assert.equal(data, `#cloud-config\n# worker v1.35.0 h:6443 via token ${current.id}\n`);
  const joined = await bootstrap.generate(testing.callSource(), { ...request, secrets: [], join: { caCertificate: 'PEM', token: undefined } });
  assert.match(new TextDecoder().decode(joined.val.data), /via the service's CA, token none\n$/);
});
