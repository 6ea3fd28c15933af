// The provider's unit tests: plain `node --test` (`make test`), no component.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import * as testing from '../node_modules/@capw/sdk/src/testing.js';
import { provider } from '../src/provider.js';

/** A control-plane member, as `plan` sees it; etcd `unknown` unless said. */
const member = (name, ready, createdAt, etcd) => testing.member(name, { ready, createdAt, ...(etcd && { etcd }) });

/** A plan's input: `replicas` wanted, `members` there. */
const input = (replicas, members) => testing.planInput({ replicas, members, failureDomains: ['a', 'b'] });

const plan = (replicas, members) => provider.points['control-plane'].plan(testing.context(provider, {}), input(replicas, members));

test('scales up one ready machine at a time', () => {
  const first = plan(3, []).step;
  assert.equal(first.kind, 'create-machine');
  assert.equal(first.machine.init, true);
  assert.equal(first.machine.failureDomain, 'a');
  assert.equal(plan(3, [member('m-0', false, 1)]).step.kind, 'wait');
  const second = plan(3, [member('m-0', true, 1)]).step;
  assert.deepEqual([second.kind, second.machine.init, second.machine.failureDomain], ['create-machine', false, 'b']);
});

test('scales down the oldest first', () => {
  const answer = plan(1, [member('new', true, 2), member('old', true, 1)]);
  assert.equal(answer.step.kind, 'delete-machine');
  assert.equal(answer.step.machine.name, 'old');
  assert.equal(answer.replicas, 2);
});

test('a member etcd lists leaves etcd before its machine is deleted', () => {
  const answer = plan(1, [member('new', true, 2, 'member'), member('old', true, 1, 'member')]);
  assert.equal(answer.step.kind, 'remove-etcd-member');
  assert.equal(answer.step.machine.name, 'old');
  assert.equal(plan(1, [member('new', true, 2, 'member'), member('old', true, 1, 'not-member')]).step.kind, 'delete-machine');
});

test('an even maximum is refused', () => {
  testing.assertFieldError(testing.assertRefusedAt(provider, { maxReplicas: 4 }, ['/maxReplicas']), '/maxReplicas', 'odd');
});
