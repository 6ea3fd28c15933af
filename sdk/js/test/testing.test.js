import assert from 'node:assert/strict';
import { AssertionError } from 'node:assert';
import { test } from 'node:test';

import { HookResponse, KubernetesVersion, defineProvider } from '../src/index.js';
import * as testing from '../src/testing.js';

const probe = defineProvider({
  name: 'probe',
  version: '0.1.0',
  description: 'A port and a list of distinct names.',
  configSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['port'],
    properties: {
      port: { type: 'integer', minimum: 1, maximum: 65535 },
      names: { type: 'array', items: { type: 'string' }, default: [] },
    },
  },
  validate: (config) => config.names
    .map((n, i) => (config.names.indexOf(n) < i ? { path: `/names/${i}`, message: 'listed twice' } : undefined))
    .filter((e) => e !== undefined),
  lifecycleHooks: { handle: () => HookResponse.proceed },
});

test('contexts default to cluster c1 and take their config with its defaults', () => {
  const ctx = testing.context(probe, { port: 1 });
  assert.deepEqual(ctx.cluster, testing.cluster('default', 'c1'));
  assert.equal(ctx.cluster.uid, 'uid-c1');
  assert.equal(ctx.idempotencyKey, 'key-1');
  assert.ok(ctx.remainingMs() <= testing.DEADLINE_MS && ctx.remainingMs() > testing.DEADLINE_MS / 2);
  assert.deepEqual(ctx.config, { port: 1, names: [] });
  assert.equal(String(ctx), 'Context { config: {"port":1,"names":[]}, cluster: default/c1, idempotencyKey: "key-1" }');
});

test('a context reads the cluster and the key once, the time left live', () => {
  let now = 1000;
  const source = testing.callSource({ port: 1 }, { cluster: testing.cluster('team-a', 'c2'), idempotencyKey: 'key-2', deadlineMs: 500, now: () => now });
  const ctx = new (testing.contextWith({}).constructor)(source, { port: 1 });
  assert.equal(String(ctx), 'Context { config: {"port":1} }');
  assert.equal(ctx.cluster.name, 'c2');
  assert.equal(ctx.cluster.name, 'c2');
  assert.equal(ctx.idempotencyKey, 'key-2');
  assert.equal(ctx.idempotencyKey, 'key-2');
  assert.equal(ctx.remainingMs(), 500);
  now += 400;
  assert.equal(ctx.remainingMs(), 100);
  now += 400;
  assert.equal(ctx.remainingMs(), 0);
  assert.deepEqual(source.reads, { cluster: 1, config: 0, idempotencyKey: 1, remainingMs: 3 });
});

test('a test config that does not parse names its field', () => {
  assert.throws(() => testing.context(probe, { port: 'x' }), (e) => e instanceof AssertionError && e.message.includes('config at `/port`: must be an integer'));
  assert.equal(testing.contextWith(5).config, 5);
});

test('accepted and refused configs', () => {
  testing.assertAccepted(probe, { port: 6443, names: ['a', 'b'] });
  const errors = testing.assertRefusedAt(probe, { port: 1, names: ['a', 'b', 'a', 'b'] }, ['/names/2', '/names/3']);
  testing.assertFieldError(errors, '/names/3', 'twice');
  testing.assertRefusedAt(probe, { port: 'x' }, ['/port']);
  testing.assertRefusedAt(probe, { port: 1, other: 1 }, ['/other']);
  testing.assertRefusedAt(probe, {}, ['']);
  testing.assertRefusedAt(probe, 'not json', ['']);
});

test('the assertions fail when they should, saying why', () => {
  assert.throws(() => testing.assertAccepted(probe, {}), (e) => e instanceof AssertionError && e.message === 'validate-config of probe refused {}:\n``: missing field `port`');
  assert.throws(() => testing.assertRefusedAt(probe, { port: 1 }, ['/port']), /expected errors at \["\/port"\], got: none \(accepted\)/);
  assert.throws(() => testing.assertFieldError([{ path: '/names/1', message: 'listed twice' }], '/names/1', 'empty'),
    /expected an error at `\/names\/1` containing "empty", got:\n`\/names\/1`: listed twice/);
});

test('versions, machines and clusters for requests', () => {
  assert.deepEqual(testing.version(35), new KubernetesVersion(1, 35, 0));
  assert.equal(String(testing.version(35, 2)), 'v1.35.2');
  assert.deepEqual(testing.machine('m1'), { name: 'm1', uid: 'uid-m1' });
  assert.equal(KubernetesVersion.parse('v1.34.1').compare(testing.version(35)) < 0, true);
  assert.throws(() => KubernetesVersion.parse('1.35'), /not vMAJOR\.MINOR\.PATCH/);
});
