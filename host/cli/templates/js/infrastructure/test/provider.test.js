// The provider's unit tests: plain `node --test` (`make test`), no component.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import * as testing from '../node_modules/@capw/sdk/src/testing.js';
import { provider } from '../src/provider.js';

test('the endpoint is named under the domain', async () => {
  const ctx = testing.context(provider, { domain: 'lab.example' });
  const state = await provider.points.infrastructure.reconcileCluster(ctx);
  assert.equal(state.kind, 'ready');
  assert.deepEqual(state.infrastructure.controlPlaneEndpoint, { host: `${ctx.cluster.name}.lab.example`, port: 6443 });
  assert.deepEqual(state.infrastructure.failureDomains, [{ name: 'zone-a', controlPlane: true }]);
});

test('a bad failure domain is named', () => {
  const errors = testing.assertRefusedAt(provider, { failureDomains: ['zone-a', 'Zone B'] }, ['/failureDomains/1']);
  testing.assertFieldError(errors, '/failureDomains/1', 'DNS label');
  testing.assertRefusedAt(provider, { domain: 'a..b' }, ['/domain']);
});
