import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  ConfigError, ConfigSchema, SchemaError, checkConfig, jsonPointer, parseConfig,
} from '../src/index.js';
import { ANNOTATION_KEYWORDS, SUPPORTED_KEYWORDS, isPointer } from '../src/config.js';

/** A schema with a nested object, a list, a map, defaults and bounds. */
const schema = new ConfigSchema({
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  additionalProperties: false,
  required: ['network'],
  properties: {
    network: {
      type: 'object',
      additionalProperties: false,
      required: ['cidr'],
      properties: {
        cidr: { type: 'string', pattern: '^[0-9./]+$' },
        mtu: { type: 'integer', minimum: 576, maximum: 9000, default: 1500 },
      },
    },
    zones: { type: 'array', items: { type: 'string', minLength: 1 }, uniqueItems: true, default: [] },
    labels: { type: 'object', additionalProperties: { type: 'integer', maximum: 255 } },
    mode: { enum: ['fast', 'safe'], default: 'safe' },
  },
});

const paths = (errors) => errors.map((e) => e.path);

test('pointers escape tilde and slash', () => {
  assert.equal(jsonPointer('a/b', 'm~n', 0), '/a~1b/m~0n/0');
  assert.equal(jsonPointer(), '');
  assert.ok(isPointer('/a~1b/m~0n/0'));
  assert.ok(isPointer(''));
  assert.ok(!isPointer('a'));
  assert.ok(!isPointer('/a~2'));
});

test('a good config passes and gets its defaults', () => {
  const text = '{"network": {"cidr": "10.0.0.0/16"}, "zones": ["a"]}';
  assert.deepEqual(checkConfig(schema, text), []);
  assert.deepEqual(parseConfig(schema, text), {
    network: { cidr: '10.0.0.0/16', mtu: 1500 },
    zones: ['a'],
    mode: 'safe',
  });
});

test('defaults fill what is left out and never what is given', () => {
  const config = parseConfig(schema, '{"network": {"cidr": "1", "mtu": 9000}, "mode": "fast"}');
  assert.equal(config.network.mtu, 9000);
  assert.equal(config.mode, 'fast');
  assert.deepEqual(config.zones, []);
  // Each parse gets its own copy of a default.
  parseConfig(schema, '{"network": {"cidr": "1"}}').zones.push('x');
  assert.deepEqual(parseConfig(schema, '{"network": {"cidr": "1"}}').zones, []);
});

test('every problem is reported at its own pointer, in document order', () => {
  const errors = schema.check({
    network: { cidr: 5, mtu: 1.5, extra: true },
    zones: ['a', '', 'a'],
    labels: { 'x/y': 300, ok: 1 },
    mode: 'slow',
    other: 1,
  });
  assert.deepEqual(errors, [
    { path: '/network/cidr', message: 'must be a string' },
    { path: '/network/mtu', message: 'must be an integer' },
    { path: '/network/extra', message: 'unknown field' },
    { path: '/zones/1', message: 'must not be empty' },
    { path: '/zones/2', message: 'repeats item 0' },
    { path: '/labels/x~1y', message: 'must be at most 255' },
    { path: '/mode', message: 'must be one of "fast", "safe"' },
    { path: '/other', message: 'unknown field' },
  ]);
});

test('a missing field is reported at the object that lacks it', () => {
  assert.deepEqual(schema.check({}), [{ path: '', message: 'missing field `network`' }]);
  assert.deepEqual(schema.check({ network: {} }), [{ path: '/network', message: 'missing field `cidr`' }]);
});

test('bounds of numbers, strings and lists', () => {
  const s = new ConfigSchema({
    type: 'object',
    properties: {
      n: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1, multipleOf: 0.25 },
      s: { type: 'string', minLength: 2, maxLength: 3 },
      l: { type: 'array', minItems: 1, maxItems: 1 },
      o: { type: 'object', minProperties: 1, maxProperties: 1 },
      c: { const: 'x' },
      u: { type: ['string', 'null'] },
      f: false,
    },
  });
  assert.deepEqual(s.check({ n: 0.25, s: 'ab', l: [1], o: { a: 1 }, c: 'x', u: null }), []);
  assert.deepEqual(paths(s.check({ n: 0, s: 'a', l: [], o: {}, c: 'y', u: 1, f: 1 })), ['/n', '/s', '/l', '/o', '/c', '/u', '/f']);
  assert.deepEqual(s.check({ n: 0.3 }), [{ path: '/n', message: 'must be a multiple of 0.25' }]);
  assert.deepEqual(s.check({ s: 'abcd', l: [1, 2] }).map((e) => e.message), ['must be at most 3 characters long', 'must have at most 1 items']);
  assert.deepEqual(s.check({ u: 1 }), [{ path: '/u', message: 'must be a string or null' }]);
  // Lengths count code points, as JSON Schema does.
  assert.deepEqual(s.check({ s: '😀😀' }), []);
});

test('text that is not JSON is refused at the document', () => {
  const [e] = checkConfig(schema, '{ this is not JSON');
  assert.equal(e.path, '');
  assert.match(e.message, /^must be a JSON document/);
  assert.throws(() => parseConfig(schema, '{"network": {"cidr": "1"}} x'), ConfigError);
});

test('a config that breaks the schema is invalid input at its first problem', () => {
  let caught;
  try {
    parseConfig(schema, '{"network": {"cidr": 5}}');
  } catch (e) {
    caught = e;
  }
  assert.ok(caught instanceof ConfigError);
  assert.equal(caught.pointer, '/network/cidr');
  assert.equal(caught.message, 'config at `/network/cidr`: must be a string');
  const p = caught.providerError();
  assert.equal(p.code, 'invalid-input');
  assert.equal(p.retryable, false);
});

test('validate runs after the schema, on the config with defaults', () => {
  const seen = [];
  const validate = (config) => {
    seen.push(config);
    return config.zones.length > 1 ? [{ path: '/zones/1', message: 'one zone only' }] : [];
  };
  assert.deepEqual(checkConfig(schema, '{"network": {"cidr": 5}}', validate), [{ path: '/network/cidr', message: 'must be a string' }]);
  assert.equal(seen.length, 0, 'validate ran on a config the schema refused');
  assert.deepEqual(checkConfig(schema, '{"network": {"cidr": "1"}}', validate), []);
  assert.equal(seen[0].network.mtu, 1500);
  assert.deepEqual(checkConfig(schema, '{"network": {"cidr": "1"}, "zones": ["a", "b"]}', validate), [{ path: '/zones/1', message: 'one zone only' }]);
});

test('a validate that throws or answers nonsense still refuses with a reason', () => {
  const text = '{"network": {"cidr": "1"}}';
  assert.deepEqual(checkConfig(schema, text, () => { throw new ConfigError('/network', 'no'); }), [{ path: '/network', message: 'no' }]);
  assert.equal(checkConfig(schema, text, () => { throw new Error('boom'); })[0].message, 'rejected: boom');
  assert.equal(checkConfig(schema, text, () => 'x')[0].path, '');
  assert.deepEqual(checkConfig(schema, text, () => [{ path: 'not a pointer', message: '' }]), [{ path: '', message: 'rejected by the provider' }]);
});

test('a schema beyond the subset is refused, naming the keyword', () => {
  assert.throws(() => new ConfigSchema({ type: 'object', properties: { a: { oneOf: [] } } }),
    (e) => e instanceof SchemaError && e.message.includes('/properties/a/oneOf') && e.message.includes('`oneOf` is not checked'));
  assert.throws(() => new ConfigSchema({ format: 'uri' }), /`format` is not checked/);
  assert.throws(() => new ConfigSchema({ type: 'text' }), /`type` must name types/);
  assert.throws(() => new ConfigSchema({ pattern: '(' }), /not a regular expression/);
  assert.throws(() => new ConfigSchema({ items: [{}] }), /prefixItems/);
  assert.throws(() => new ConfigSchema('{'), /not JSON/);
  assert.throws(() => new ConfigSchema(5), /a schema must be an object or a boolean/);
});

test('the subset is the one the README lists', () => {
  assert.deepEqual(SUPPORTED_KEYWORDS, [
    'additionalProperties', 'const', 'enum', 'exclusiveMaximum', 'exclusiveMinimum', 'items',
    'maxItems', 'maxLength', 'maxProperties', 'maximum', 'minItems', 'minLength', 'minProperties',
    'minimum', 'multipleOf', 'pattern', 'properties', 'required', 'type', 'uniqueItems',
  ]);
  assert.deepEqual(ANNOTATION_KEYWORDS, [
    '$comment', '$id', '$schema', 'default', 'deprecated', 'description', 'examples', 'readOnly',
    'title', 'writeOnly', 'x-capw-shapes-machine',
  ]);
  // capw's own annotation marks a field that shapes no machine; the SDK reads past it.
  const schema = new ConfigSchema({ type: 'object', properties: { timeout: { type: 'integer', 'x-capw-shapes-machine': false } } });
  assert.deepEqual(schema.check({ timeout: 5 }), []);
});

test('the published schema is the given one, as JSON text', () => {
  const s = new ConfigSchema('{"type": "object", "default": {}}');
  assert.equal(s.text, '{"type":"object","default":{}}');
  assert.ok(Object.isFrozen(s.document));
  assert.deepEqual(new ConfigSchema(true).check(5), []);
});
