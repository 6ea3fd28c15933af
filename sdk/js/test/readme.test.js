// The README's provider and test, as written there.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { HookResponse, InProgress, defineProvider } from '../src/index.js';
import * as testing from '../src/testing.js';

const provider = defineProvider({
  name: 'my-hooks',
  version: '0.1.0',
  description: 'Holds upgrades to a minor version listed as frozen.',
  configSchema: {
    type: 'object',
    additionalProperties: false,
    properties: { frozen: { type: 'array', items: { type: 'integer' }, default: [] } },
  },
  lifecycleHooks: {
    handle(ctx, request) {
      if (request.hook === 'before-cluster-upgrade' && ctx.config.frozen.includes(request.toVersion.minor)) {
        return HookResponse.hold(new InProgress('VersionFrozen', `${request.toVersion} is frozen`).requeueAfter(60_000));
      }
      return HookResponse.proceed;
    },
  },
});

test('a frozen minor holds its upgrade', async () => {
  testing.assertAccepted(provider, { frozen: [36] });
  testing.assertRefusedAt(provider, { frozen: ['x'] }, ['/frozen/0']);
  const ctx = testing.context(provider, { frozen: [35] });
  const answer = await provider.points['lifecycle-hooks'].handle(ctx, {
    hook: 'before-cluster-upgrade', fromVersion: testing.version(34), toVersion: testing.version(35),
  });
  assert.equal(answer.kind, 'hold');
  assert.equal(answer.progress.message, 'v1.35.0 is frozen');
  assert.equal(answer.progress.requeueAfterMs, 60_000);
  const other = await provider.points['lifecycle-hooks'].handle(testing.context(provider), {
    hook: 'before-cluster-upgrade', fromVersion: testing.version(34), toVersion: testing.version(35),
  });
  assert.equal(other, HookResponse.proceed);
});
