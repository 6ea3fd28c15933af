// Log, secrets and HTTP, against the native host and a fake one.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { HTTPError, SecretError, log, request, secret, secretText, asProviderError } from '../src/index.js';
import { outgoing, transportFailure } from '../src/http.js';
import { jsonResponse, useHost } from '../src/testing.js';

test('outside a component nothing is granted and no request is sent', async () => {
  assert.throws(() => secret('token'), (e) => e instanceof SecretError && e.reason === 'not-granted');
  await assert.rejects(request('https://api.example.test/'), (e) => e instanceof HTTPError && e.kind === 'other' && /no wasi:http host/.test(e.message));
});

test('log records reach the host with their fields as strings', (t) => {
  const host = useHost(t);
  log.info('instance created', { cluster: 'c1', count: 2, tags: ['a'], none: undefined });
  log.error('boom');
  assert.deepEqual(host.logs, [
    { level: 'info', message: 'instance created', fields: { cluster: 'c1', count: '2', tags: '["a"]', none: '' } },
    { level: 'error', message: 'boom', fields: {} },
  ]);
});

test('secrets: granted, granted but missing, not granted', (t) => {
  useHost(t, { secrets: { token: 's3cret', later: null } });
  assert.equal(secretText('token'), 's3cret');
  const missing = (() => { try { secret('later'); } catch (e) { return e; } })();
  assert.equal(missing.reason, 'not-found');
  assert.equal(asProviderError(missing).code, 'unavailable');
  assert.equal(asProviderError(missing).retryable, true);
  const denied = (() => { try { secret('other'); } catch (e) { return e; } })();
  assert.equal(asProviderError(denied).code, 'not-granted');
  assert.equal(asProviderError(denied).retryable, false);
  assert.ok(!denied.message.includes('s3cret'));
});

test('a request goes out whole and its response comes back whole', async (t) => {
  const host = useHost(t, { http: (r) => (r.url.endsWith('/v1/things?x=1') ? jsonResponse(200, { id: 7 }) : { status: 404 }) });
  const response = await request('HTTPS://api.example.test:8443/v1/things?x=1#frag', {
    method: 'post', headers: { authorization: 'Bearer t' }, body: '{"a":1}', timeoutMs: 1000,
  });
  assert.equal(response.status, 200);
  assert.ok(response.isSuccess);
  assert.deepEqual(response.json(), { id: 7 });
  assert.equal(response.header('Content-Type'), 'application/json');
  assert.equal(response.errorForStatus(), undefined);
  assert.deepEqual(host.sent[0].headers, [['authorization', 'Bearer t'], ['content-length', '7']]);
  assert.equal(host.sent[0].method, 'POST');
  assert.equal(host.sent[0].url, 'https://api.example.test:8443/v1/things?x=1');
  assert.equal((await request('http://api.example.test')).status, 404);
  assert.equal(host.sent[1].url, 'http://api.example.test/');
});

test('statuses become the errors they mean', async (t) => {
  const statuses = { '/429': [429, '7'], '/503': [503, 'Wed, 21 Oct 2015 07:28:00 GMT'], '/401': [401], '/409': [409], '/400': [400], '/500': [500] };
  useHost(t, { http: (r) => { const [status, after] = statuses[new URL(r.url).pathname]; return { status, headers: after ? { 'Retry-After': after } : {} }; } });
  const e = async (path) => (await request(`http://h${path}`)).errorForStatus();
  assert.deepEqual([(await e('/429')).code, (await e('/429')).retryAfterMs], ['unavailable', 7000]);
  assert.deepEqual([(await e('/503')).retryable, (await e('/503')).retryAfterMs], [true, undefined]);
  assert.deepEqual([(await e('/401')).code, (await e('/401')).retryable], ['unauthorized', false]);
  assert.deepEqual([(await e('/409')).code, (await e('/409')).retryable], ['conflict', true]);
  assert.equal((await e('/400')).code, 'invalid-input');
  assert.deepEqual([(await e('/500')).code, (await e('/500')).retryable], ['unavailable', true]);
});

test('a body that is not JSON is a retryable error, not a crash', async (t) => {
  useHost(t, { http: () => ({ status: 200, body: '<html>' }) });
  const response = await request('http://h/');
  assert.throws(() => response.json(), (e) => e.code === 'unavailable' && e.retryable);
});

test('a denied host is a missing grant; transport failures are retryable', async (t) => {
  useHost(t);
  await assert.rejects(request('https://evil.example.test/'), (e) => e.kind === 'denied' && asProviderError(e).code === 'not-granted' && /evil\.example\.test/.test(e.message));
  const failing = useHost(t, { http: () => ({ failure: { kind: 'connect', detail: 'connection-refused' } }) });
  await assert.rejects(request('http://127.0.0.1:9/'), (e) => asProviderError(e).code === 'unavailable' && asProviderError(e).retryable);
  assert.equal(failing.sent.length, 1);
});

test('a URL or header the client cannot send is refused before it goes out', () => {
  for (const [url, reason] of [
    ['ftp://h/', 'scheme must be http or https'], ['/relative', 'not an absolute URL'], ['https:///x', 'missing host'],
    ['https://user@h/', 'user info is not supported'], ['https://h/a b', 'whitespace or control characters'],
  ]) {
    assert.throws(() => outgoing(url), (e) => e.kind === 'invalid-url' && e.message.includes(reason), url);
  }
  assert.throws(() => outgoing('https://h/', { headers: { 'bad name': 'x' } }), (e) => e.kind === 'invalid-header');
  assert.throws(() => outgoing('https://h/', { headers: { ok: 'a\r\nb' } }), (e) => asProviderError(e).code === 'invalid-input');
  assert.throws(() => outgoing('https://h/', { method: 'TRACE' }), /method TRACE is not supported/);
});

test('fetch failures are read from their message', () => {
  assert.equal(transportFailure(new TypeError('HTTP-request-denied')).kind, 'denied');
  assert.equal(transportFailure(new TypeError('connection-refused')).kind, 'connect');
  assert.equal(transportFailure(Object.assign(new Error('aborted'), { name: 'AbortError' })).kind, 'timeout');
  assert.equal(transportFailure(new TypeError('something else')).kind, 'other');
});

test('the component fetch\'s one network error says what it cannot tell', () => {
  const failure = transportFailure(new TypeError('NetworkError when attempting to fetch resource'));
  assert.equal(failure.kind, 'other');
  assert.match(failure.detail, /not granted, unreachable or refused/);
  const e = new HTTPError(failure.kind, 'api.example.test', failure.detail);
  assert.match(e.message, /^request to `api\.example\.test` failed: NetworkError/);
  assert.deepEqual([asProviderError(e).code, asProviderError(e).retryable], ['internal', true]);
});
