import assert from 'node:assert/strict';
import { test } from 'node:test';

import { ErrorCode, ProviderError, asProviderError } from '../src/index.js';
import { U32_MAX, millis } from '../src/errors.js';

test('retryable and permanent set the retry flag', () => {
  const down = ProviderError.retryable(ErrorCode.Unavailable, 'down');
  assert.equal(down.retryable, true);
  assert.equal(down.retryAfterMs, undefined);
  assert.equal(down.message, 'down');
  const bad = ProviderError.permanent(ErrorCode.InvalidInput, 'bad');
  assert.equal(bad.retryable, false);
  assert.equal(bad.code, 'invalid-input');
  assert.ok(bad instanceof Error);
});

test('unsupported names what and is permanent', () => {
  const e = ProviderError.unsupported('bootstrap.generate');
  assert.equal(e.code, 'unsupported');
  assert.equal(e.retryable, false);
  assert.match(e.message, /bootstrap\.generate is not supported/);
});

test('retry after marks retryable, rounds up and saturates', () => {
  const e = ProviderError.permanent(ErrorCode.Conflict, 'busy').retryAfter(1500);
  assert.equal(e.retryable, true);
  assert.equal(e.retryAfterMs, 1500);
  assert.equal(ProviderError.permanent(ErrorCode.Conflict, 'x').retryAfter(0.2).retryAfterMs, 1);
  assert.equal(ProviderError.retryable(ErrorCode.Unavailable, 'x').retryAfter(1e20).retryAfterMs, U32_MAX);
  assert.throws(() => millis(Number.NaN), TypeError);
});

test('an unknown code is refused where it is written', () => {
  assert.throws(() => new ProviderError('oops', 'x'), /unknown error code "oops"/);
});

test('any other error is a retryable internal error with its message', () => {
  const e = asProviderError(new RangeError('index out of range'));
  assert.equal(e.code, 'internal');
  assert.equal(e.retryable, true);
  assert.equal(e.message, 'index out of range');
  assert.equal(asProviderError('a string').message, 'a string');
  const known = ProviderError.permanent(ErrorCode.NotGranted, 'no');
  assert.equal(asProviderError(known), known);
  assert.equal(asProviderError({ providerError: () => known }), known);
});
