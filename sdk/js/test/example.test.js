// examples/every-point answers what the conformance suite expects, natively.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import * as testing from '../src/testing.js';
import { provider } from '../examples/every-point/provider.js';

test('every-point declares every extension point and a machines control plane', () => {
  const d = testing.exports(provider).metadata.describe();
  assert.deepEqual(d.extensionPoints, ['infrastructure', 'bootstrap', 'control-plane', 'lifecycle-hooks']);
  assert.deepEqual(d.capabilities, { controlPlaneShape: 'machines', controlPlaneScalable: true, versionUpgrades: false });
  testing.assertAccepted(provider, {});
  testing.assertRefusedAt(provider, { domain: 'Not A Domain' }, ['/domain']);
});

test('every-point removes the oldest member from etcd when there are too many', async () => {
  const member = (name, createdAt) => ({ machine: testing.machine(name), version: { major: 1, minor: 35, patch: 0 }, failureDomain: undefined, ready: true, createdAt, deleting: false });
  const answer = await testing.exports(provider).controlPlane.plan(testing.callSource(), {
    version: { major: 1, minor: 35, patch: 0 }, replicas: 1, members: [member('m1', 20n), member('m0', 10n)], failureDomains: [], endpoint: undefined,
  });
  assert.deepEqual(answer.val.step, { tag: 'remove-etcd-member', val: { name: 'm0', uid: 'uid-m0' } });
  assert.deepEqual([answer.val.replicas, answer.val.readyReplicas], [2, 2]);
});
