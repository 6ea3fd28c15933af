// Bootstrap's additions of contract 0.3: join credentials in a request, and the join token the
// host keeps valid (`currentJoinToken`, `renewJoinToken`).

import assert from 'node:assert/strict';
import { AssertionError } from 'node:assert';
import { test } from 'node:test';

import { BootstrapFormat, ErrorCode, HookResponse, ProviderError, defineProvider } from '../src/index.js';
import * as testing from '../src/testing.js';

const ITEM = 'bootstrap-token';
const text = (data) => new TextDecoder().decode(data);

/** A token from the item's `<id>.<secret>`, renewed to an id one letter on. */
const tokenOf = (secrets, config) => {
  const found = secrets.find((s) => s.name === ITEM);
  if (found === undefined) {
    throw ProviderError.permanent(ErrorCode.InvalidInput, `secrets: no ${ITEM}`);
  }
  const [id, secret] = text(found.data).split('.');
  return { item: ITEM, id, secret, ttlSeconds: config.ttlSeconds, extraGroups: ['system:bootstrappers:kubeadm:default-node-token'] };
};

const keeper = defineProvider({
  name: 'keeper',
  version: '0.1.0',
  description: 'Keeps a join token.',
  configSchema: {
    type: 'object',
    additionalProperties: false,
    properties: { ttlSeconds: { type: 'integer', minimum: 0, default: 86_400 }, sameId: { type: 'boolean', default: false } },
  },
  bootstrap: {
    generate: (ctx, request) => ({
      format: BootstrapFormat.Raw,
      data: request.join === undefined
        ? `join with ${text(request.secrets[0].data)}`
        : `join ${request.endpoint.host} pinning ${request.join.caCertificate} with ${request.join.token?.id ?? 'no token'}`,
    }),
    currentJoinToken: (ctx, secrets) => tokenOf(secrets, ctx.config),
    async renewJoinToken(ctx, secrets) {
      const current = tokenOf(secrets, ctx.config);
      const id = ctx.config.sameId ? current.id : `${current.id.slice(1)}${current.id[0]}`;
      return { ...current, id };
    },
  },
});

/** Serves bootstrap with neither token method. */
const plain = defineProvider({
  name: 'plain',
  version: '0.1.0',
  description: 'No token to keep.',
  configSchema: { type: 'object', additionalProperties: false, properties: { x: { type: 'integer' } } },
  bootstrap: { generate: () => ({ format: BootstrapFormat.Raw, data: '' }) },
});

const hooksOnly = defineProvider({ name: 'hooks', version: '0.1.0', description: 'd', lifecycleHooks: { handle: () => HookResponse.proceed } });

const secrets = [{ name: ITEM, data: new TextEncoder().encode('abcdef.0123456789abcdef') }];

test('a token is answered in the contract shape, its ttl as the u64 a component takes', async () => {
  const answer = await testing.exports(keeper).bootstrap.currentJoinToken(testing.callSource(), secrets);
  assert.deepEqual(answer, {
    tag: 'ok',
    val: {
      item: ITEM, id: 'abcdef', secret: '0123456789abcdef', ttlSeconds: 86_400n,
      extraGroups: ['system:bootstrappers:kubeadm:default-node-token'],
    },
  });
  const renewed = await testing.exports(keeper).bootstrap.renewJoinToken(testing.callSource(), secrets);
  assert.equal(renewed.val.id, 'bcdefa');
});

test('left out, currentJoinToken answers none and renewJoinToken unsupported; a bad config still fails', async () => {
  const { bootstrap } = testing.exports(plain);
  assert.deepEqual(await bootstrap.currentJoinToken(testing.callSource(), secrets), { tag: 'ok', val: undefined });
  const renew = await bootstrap.renewJoinToken(testing.callSource(), secrets);
  assert.deepEqual(renew.val, {
    code: 'unsupported', message: 'bootstrap.renew-join-token is not supported by this provider', retryable: false, retryAfterMs: undefined,
  });
  const bad = await bootstrap.currentJoinToken(testing.callSource({ x: 'one' }), secrets);
  assert.equal(bad.val.code, 'invalid-input');
  // A provider without the bootstrap point answers unsupported, without reading its config.
  const source = testing.callSource('{ not JSON');
  const none = await testing.exports(hooksOnly).bootstrap.currentJoinToken(source, secrets);
  assert.equal(none.val.code, 'unsupported');
  assert.equal(source.reads.config, 0);
});

test('a token of the wrong form is a malformed answer that never shows its secret', async () => {
  const answerWith = (token) => defineProvider({
    name: 'bad-token', version: '0.1.0', description: 'd', bootstrap: { currentJoinToken: () => token },
  });
  const good = { item: ITEM, id: 'abcdef', secret: '0123456789abcdef', ttlSeconds: 0, extraGroups: [] };
  const cases = [
    [{ ...good, id: 'ABCDEF' }, /currentJoinToken\.id: must be 6 characters of \[a-z0-9\], got "ABCDEF"/],
    [{ ...good, secret: 'Top-Secret-Value' }, /currentJoinToken\.secret: must be 16 characters of \[a-z0-9\]$/],
    [{ ...good, ttlSeconds: -1 }, /currentJoinToken\.ttlSeconds: must be a whole number/],
    [{ ...good, ttlSeconds: 2 ** 60 }, /a BigInt or a safe integer/],
    [{ ...good, ttlSeconds: undefined }, /currentJoinToken\.ttlSeconds/],
    [{ ...good, extraGroups: ['system:nodes'] }, /extraGroups\[0\]: must start with system:bootstrappers:/],
  ];
  for (const [token, message] of cases) {
    const answer = await testing.exports(answerWith(token)).bootstrap.currentJoinToken(testing.callSource(), []);
    assert.equal(answer.val.code, 'internal');
    assert.match(answer.val.message, message);
    assert.doesNotMatch(answer.val.message, /Top-Secret-Value/);
  }
  const big = await testing.exports(answerWith({ ...good, ttlSeconds: 2n ** 64n - 1n })).bootstrap.currentJoinToken(testing.callSource(), []);
  assert.equal(big.val.ttlSeconds, 2n ** 64n - 1n);
});

test('a worker joining a service control plane gets the join credentials, frozen', async () => {
  const request = {
    machine: testing.machine('w'), role: 'worker', version: testing.version(35), endpoint: { host: 'api.svc', port: 443 },
    secrets: [], controlPlaneMembers: [],
    join: {
      caCertificate: 'PEM',
      token: { item: 'joins', id: 'abcdef', secret: '0123456789abcdef', ttlSeconds: 0n, extraGroups: [] },
    },
  };
  let seen;
  const p = defineProvider({
    name: 'seer', version: '0.1.0', description: 'd',
    bootstrap: { generate: (ctx, r) => { seen = r; return { format: BootstrapFormat.Raw, data: '' }; } },
  });
  await testing.exports(p).bootstrap.generate(testing.callSource(), request);
  assert.ok(Object.isFrozen(seen.join) && Object.isFrozen(seen.join.token));
  assert.equal(String(seen.version), 'v1.35.0');
  const answer = await testing.exports(keeper).bootstrap.generate(testing.callSource(), request);
  assert.equal(text(answer.val.data), 'join api.svc pinning PEM with abcdef');
  const tokenless = await testing.exports(keeper).bootstrap.generate(testing.callSource(), { ...request, join: { caCertificate: 'PEM', token: undefined } });
  assert.equal(text(tokenless.val.data), 'join api.svc pinning PEM with no token');
  // The machines shape: none, and the secrets carry the join.
  const machines = await testing.exports(keeper).bootstrap.generate(testing.callSource(), { ...request, secrets, join: undefined });
  assert.equal(text(machines.val.data), 'join with abcdef.0123456789abcdef');
});

test('assertJoinTokenRenews runs the host\'s round and says what broke', async () => {
  const { current, renewed } = await testing.assertJoinTokenRenews(keeper, [{ name: ITEM, data: 'abcdef.0123456789abcdef' }]);
  assert.deepEqual([current.id, renewed.id, renewed.item], ['abcdef', 'bcdefa', ITEM]);
  assert.deepEqual(await testing.assertJoinTokenRenews(plain, secrets), {});
  await assert.rejects(testing.assertJoinTokenRenews(keeper, secrets, { sameId: true }),
    (e) => e instanceof AssertionError && e.message === "join token of keeper: renew-join-token answered the current token's id abcdef");
  await assert.rejects(testing.assertJoinTokenRenews(keeper, []),
    (e) => e instanceof AssertionError && /current-join-token failed: secrets: no bootstrap-token/.test(e.message));
  const forgetful = defineProvider({
    name: 'forgetful', version: '0.1.0', description: 'd',
    bootstrap: {
      currentJoinToken: () => ({ item: ITEM, id: 'abcdef', secret: '0123456789abcdef', ttlSeconds: 0, extraGroups: [] }),
      renewJoinToken: () => ({ item: ITEM, id: 'zzzzzz', secret: '0123456789abcdef', ttlSeconds: 0, extraGroups: [] }),
    },
  });
  await assert.rejects(testing.assertJoinTokenRenews(forgetful, secrets),
    /with the renewed token zzzzzz stored, current-join-token names abcdef/);
  await assert.rejects(testing.assertJoinTokenRenews(forgetful, [{ name: 'other', data: 'x' }]),
    /names item "bootstrap-token", which the secrets do not have/);
});
