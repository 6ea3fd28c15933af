// The provider's unit tests: plain `node --test` (`make test`), no component.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import * as testing from '../node_modules/@capw/sdk/src/testing.js';
import { TOKEN, provider } from '../src/provider.js';

const bootstrap = provider.points.bootstrap;

test('the token is made once per cluster, and generate needs it', async () => {
  const ctx = testing.context(provider, { packages: ['curl'] });
  const secrets = await bootstrap.clusterSecrets(ctx);
  assert.deepEqual(secrets.items, [{ name: TOKEN, data: `token:${ctx.cluster.uid}` }]);

  const request = {
    machine: testing.machine('m-0'),
    role: 'init',
    version: testing.version(35),
    endpoint: { host: '10.0.0.1', port: 6443 },
    secrets: [{ name: TOKEN, data: new TextEncoder().encode('token:x') }],
    controlPlaneMembers: [],
  };
  const data = await bootstrap.generate(ctx, request);
  assert.equal(data.data, '#cloud-config\n# role: init\n# version: v1.35.0\n# endpoint: 10.0.0.1:6443\n'
    + '# members: \ntimezone: UTC\npackages:\n- curl\n');
  await assert.rejects(async () => bootstrap.generate(ctx, { ...request, secrets: [] }), /no bootstrap-token/);
});

test('a worker of a service\'s control plane joins with the credentials it is given', async () => {
  const ctx = testing.context(provider);
  const request = {
    machine: testing.machine('w-0'),
    role: 'worker',
    version: testing.version(35),
    endpoint: { host: 'api.example.test', port: 443 },
    secrets: [],
    controlPlaneMembers: [],
    join: { caCertificate: '-----BEGIN CERTIFICATE-----', token: { item: 'join', id: 'abcdef', secret: '0123456789abcdef', ttlSeconds: 0n, extraGroups: [] } },
  };
  const data = await bootstrap.generate(ctx, request);
  assert.match(data.data, /# joins: the service's control plane, token abcdef\n/);
  assert.doesNotMatch(data.data, /0123456789abcdef/);
});

test('no join token is kept', async () => {
  assert.deepEqual(await testing.assertJoinTokenRenews(provider, [{ name: TOKEN, data: 'token:x' }]), {});
});

test('a bad package is named', () => {
  testing.assertAccepted(provider, { timezone: 'Europe/Berlin', packages: ['g++', 'libc6'] });
  const errors = testing.assertRefusedAt(provider, { packages: ['curl', 'Bad Name'] }, ['/packages/1']);
  testing.assertFieldError(errors, '/packages/1', 'Debian package');
});
