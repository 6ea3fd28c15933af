import assert from 'node:assert/strict';
import { test } from 'node:test';

import * as testing from '../../../../sdk/js/src/testing.js';
import { Hook, HOOKS, HookResponse } from '../src/sdk.js';
import { fnv1a, holdWindow } from '../src/hold-once.js';
import { hooksProvider, provider } from '../src/provider.js';

const KEY = 'uid-c1-beforeClusterUpgrade-v1.35.0';
const upgrade = { hook: Hook.BeforeClusterUpgrade, fromVersion: testing.version(34), toVersion: testing.version(35) };

/** The first millisecond of `key`'s cycle of `cycleMs` at or after `fromMs`. */
function cycleStart(key, cycleMs, fromMs = 1_800_000_000_000) {
  const phase = (fromMs + fnv1a(key)) % cycleMs;
  return fromMs + (phase === 0 ? 0 : cycleMs - phase);
}

/** The provider with a clock the test sets. */
function clocked(startMs) {
  const clock = { now: startMs };
  return { clock, p: hooksProvider({ now: () => clock.now }) };
}

test('describe: lifecycle hooks only, with the config schema', () => {
  const d = testing.exports(provider).metadata.describe();
  assert.equal(d.name, 'js-hooks');
  assert.deepEqual(d.extensionPoints, ['lifecycle-hooks']);
  assert.deepEqual(JSON.parse(d.configSchema).properties.holdOnce.properties.hook.enum, HOOKS);
});

test('configs: accepted, refused at the field, defaults applied', () => {
  testing.assertAccepted(provider, {});
  testing.assertAccepted(provider, { holdOnce: { hook: 'before-cluster-upgrade', seconds: 5 } });
  testing.assertAccepted(provider, { holdOnce: { hook: 'before-cluster-delete', seconds: 1, proceedSeconds: 30, answer: 'retry-after' } });
  testing.assertFieldError(testing.assertRefusedAt(provider, { holdOnce: { hook: 'before-lunch' } }, ['/holdOnce/hook']), '/holdOnce/hook', 'must be one of');
  testing.assertRefusedAt(provider, { holdOnce: { hook: 'before-cluster-create', seconds: 0 } }, ['/holdOnce/seconds']);
  testing.assertRefusedAt(provider, { holdOnce: { seconds: 5, extra: 1 } }, ['/holdOnce', '/holdOnce/extra']);
  testing.assertRefusedAt(provider, { holdOnce: { hook: 'before-cluster-create', answer: 'never' } }, ['/holdOnce/answer']);
  testing.assertRefusedAt(provider, { holdone: {} }, ['/holdone']);
  const ctx = testing.context(provider, { holdOnce: { hook: 'before-cluster-upgrade' } });
  assert.deepEqual(ctx.config.holdOnce, { hook: 'before-cluster-upgrade', seconds: 5, answer: 'hold' });
});

test('without holdOnce, and at every other hook point, everything proceeds', async () => {
  const ctx = testing.context(provider, {});
  for (const hook of HOOKS) {
    assert.equal(await provider.points['lifecycle-hooks'].handle(ctx, { ...upgrade, hook }), HookResponse.proceed);
  }
  const start = cycleStart(KEY, 10_000);
  const { p } = clocked(start);
  const held = testing.context(p, { holdOnce: { hook: 'before-cluster-delete', seconds: 5 } }, { idempotencyKey: KEY });
  assert.equal(await p.points['lifecycle-hooks'].handle(held, upgrade), HookResponse.proceed);
});

test('the named hook is held once, for at most its seconds, then proceeds', async () => {
  const start = cycleStart(KEY, 10_000);
  const { clock, p } = clocked(start + 1_500);
  const handle = (call = {}) => testing.exports(p).lifecycleHooks.handle(
    testing.callSource({ holdOnce: { hook: 'before-cluster-upgrade', seconds: 5 } }, { idempotencyKey: KEY, ...call }),
    { hook: 'before-cluster-upgrade', fromVersion: { major: 1, minor: 34, patch: 0 }, toVersion: { major: 1, minor: 35, patch: 0 } },
  );
  const first = await handle();
  assert.equal(first.tag, 'ok');
  assert.equal(first.val.tag, 'hold');
  assert.equal(first.val.val.reason, 'HeldOnce');
  assert.equal(first.val.val.requeueAfterMs, 3_500);
  assert.match(first.val.val.message, /^before-cluster-upgrade to v1\.35\.0 held once, until /);
  // A sooner call names the same end.
  clock.now += 1_000;
  const sooner = await handle();
  assert.equal(sooner.val.val.requeueAfterMs, 2_500);
  assert.equal(sooner.val.val.message, first.val.val.message);
  // The call after the hint proceeds, and so would any until the proceed window ends.
  clock.now += 2_500;
  assert.deepEqual(await handle(), { tag: 'ok', val: { tag: 'proceed' } });
  clock.now += 4_999;
  assert.deepEqual(await handle(), { tag: 'ok', val: { tag: 'proceed' } });
});

test('answer retry-after: a retryable error whose retry-after is the time left', async () => {
  const start = cycleStart(KEY, 4_000);
  const { p } = clocked(start);
  const ctx = testing.context(p, { holdOnce: { hook: 'before-cluster-upgrade', seconds: 2, answer: 'retry-after' } }, { idempotencyKey: KEY });
  await assert.rejects(async () => p.points['lifecycle-hooks'].handle(ctx, upgrade), (e) => {
    assert.equal(e.code, 'unavailable');
    assert.equal(e.retryable, true);
    assert.equal(e.retryAfterMs, 2_000);
    return true;
  });
});

test('a held call is logged, with the hook, the version and the key', async (t) => {
  const host = testing.useHost(t);
  const start = cycleStart(KEY, 10_000);
  const { p } = clocked(start);
  const ctx = testing.context(p, { holdOnce: { hook: 'before-cluster-upgrade' } }, { idempotencyKey: KEY });
  await p.points['lifecycle-hooks'].handle(ctx, upgrade);
  assert.equal(host.logs.length, 1);
  assert.equal(host.logs[0].message, 'hook held once');
  assert.deepEqual({ ...host.logs[0].fields, until: undefined }, { hook: 'before-cluster-upgrade', to: 'v1.35.0', key: KEY, until: undefined });
});

test('hold windows: where each key\'s cycle starts, and how long a hold lasts', () => {
  const rule = { hook: 'before-cluster-create', seconds: 5, answer: 'hold' };
  const start = cycleStart(KEY, 10_000);
  assert.deepEqual(holdWindow(rule, KEY, start), { untilMs: start + 5_000, remainingMs: 5_000 });
  assert.deepEqual(holdWindow(rule, KEY, start + 4_999), { untilMs: start + 5_000, remainingMs: 1 });
  assert.equal(holdWindow(rule, KEY, start + 5_000), undefined);
  assert.equal(holdWindow(rule, KEY, start + 9_999), undefined);
  assert.equal(holdWindow(rule, KEY, start + 10_000).remainingMs, 5_000);
  // A shorter proceed window: more calls fall in a hold window.
  const tight = { ...rule, proceedSeconds: 1 };
  const s = cycleStart(KEY, 6_000);
  assert.equal(holdWindow(tight, KEY, s + 5_999), undefined);
  assert.equal(holdWindow(tight, KEY, s + 6_000).remainingMs, 5_000);
  // Keys spread over the cycle.
  assert.notEqual(fnv1a('uid-a-beforeClusterCreate-v1.35.0') % 10_000, fnv1a('uid-b-beforeClusterCreate-v1.35.0') % 10_000);
  assert.equal(fnv1a(''), 0x811c9dc5);
  assert.equal(fnv1a('a'), 0xe40c292c);
});

test('over many transitions, about half are held, never longer than the window', () => {
  const rule = { hook: 'before-cluster-create', seconds: 5, answer: 'hold' };
  let held = 0;
  for (let i = 0; i < 1000; i++) {
    const w = holdWindow(rule, `uid-${i}-beforeClusterCreate-v1.35.0`, 1_800_000_000_000 + i * 37);
    if (w !== undefined) {
      held += 1;
      assert.ok(w.remainingMs > 0 && w.remainingMs <= 5_000);
      assert.equal(holdWindow(rule, `uid-${i}-beforeClusterCreate-v1.35.0`, w.untilMs), undefined);
    }
  }
  assert.ok(held > 400 && held < 600, `${held} of 1000 held`);
});

test('holdUntil: held until its time with the time left, then proceeds; other hooks never', async (t) => {
  const host = testing.useHost(t);
  const at = '2027-01-01T06:00:00Z';
  const atMs = Date.parse(at);
  const { clock, p } = clocked(atMs - 90_000);
  const handle = (request, answer = 'hold') => p.points['lifecycle-hooks'].handle(
    testing.context(p, { holdUntil: { hook: 'before-cluster-upgrade', at, answer } }, { idempotencyKey: KEY }), request);
  const first = await handle(upgrade);
  assert.equal(first.kind, 'hold');
  assert.equal(first.progress.reason, 'HeldUntil');
  assert.equal(first.progress.requeueAfterMs, 90_000);
  assert.equal(first.progress.message, `before-cluster-upgrade to v1.35.0 held until ${at}`);
  assert.equal(await handle({ ...upgrade, hook: Hook.BeforeClusterDelete }), HookResponse.proceed);
  clock.now = atMs - 1;
  await assert.rejects(async () => handle(upgrade, 'retry-after'), (e) => {
    assert.equal(e.code, 'unavailable');
    assert.equal(e.retryAfterMs, 1);
    return true;
  });
  clock.now = atMs;
  assert.equal(await handle(upgrade), HookResponse.proceed);
  assert.deepEqual(host.logs.map((l) => l.message), ['hook held until', 'hook held until', 'hook proceeds: its hold has ended']);
});

test('holdUntil: a time that is no time, or beside holdOnce, is refused at the field', () => {
  testing.assertAccepted(provider, { holdUntil: { hook: 'before-cluster-create', at: '2026-12-24T06:00:00.5Z', answer: 'retry-after' } });
  testing.assertRefusedAt(provider, { holdUntil: { hook: 'before-cluster-create', at: '2026-12-24 06:00' } }, ['/holdUntil/at']);
  testing.assertFieldError(
    testing.assertRefusedAt(provider, { holdUntil: { hook: 'before-cluster-create', at: '2026-13-45T06:00:00Z' } }, ['/holdUntil/at']),
    '/holdUntil/at', 'must be a real time');
  testing.assertFieldError(
    testing.assertRefusedAt(provider, { holdOnce: { hook: 'before-cluster-create' }, holdUntil: { hook: 'before-cluster-create', at: '2026-12-24T06:00:00Z' } }, ['/holdUntil']),
    '/holdUntil', 'not both');
});
