// The provider's unit tests: plain `node --test` (`make test`), no component.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import * as testing from '../node_modules/@capw/sdk/src/testing.js';
import { Hook, HookResponse } from '../node_modules/@capw/sdk/src/index.js';
import { provider } from '../src/provider.js';

/** `handle` of the provider with `config`, at `hook`. */
const handle = (config, hook) => provider.points['lifecycle-hooks'].handle(
  testing.context(provider, config),
  { hook, fromVersion: undefined, toVersion: testing.version(35) },
);

test('a protected cluster is held at deletion only', async () => {
  const held = await handle({ protectFromDelete: true }, Hook.BeforeClusterDelete);
  assert.equal(held.kind, 'hold');
  assert.equal(held.progress.reason, 'DeletionProtected');
  assert.equal(held.progress.requeueAfterMs, 60_000);
  assert.equal(await handle({ protectFromDelete: true }, Hook.BeforeClusterCreate), HookResponse.proceed);
});

test('an unprotected cluster is deleted; the flag is a boolean', async () => {
  assert.equal(await handle({}, Hook.BeforeClusterDelete), HookResponse.proceed);
  testing.assertRefusedAt(provider, { protectFromDelete: 'yes' }, ['/protectFromDelete']);
});
