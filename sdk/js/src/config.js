// A provider's config: its JSON Schema, checked and with its defaults applied, and errors that
// point at the field that caused them.
//
// Paths are JSON Pointers (RFC 6901): `""` is the whole document, `/network/cidr` a field,
// `/zones/2` the third item of a list; `~` and `/` inside a key are written `~0` and `~1`.
//
// No JSON Schema validator runs inside a componentize-js component without being bundled, and
// none of the well-kept ones is small, so the SDK checks a subset of draft 2020-12 itself. A
// schema that uses any other keyword is refused when the provider is defined: a keyword the SDK
// would skip is a rule validate-config would not check, while the host does. The subset (see
// also the README):
//
// - annotations, read and not checked: `$schema`, `$id`, `$comment`, `title`, `description`,
//   `default` (applied to a config that leaves the field out), `examples`, `deprecated`,
//   `readOnly`, `writeOnly`;
// - any value: `type` (one name or a list; `integer` is a number without a fraction), `enum`,
//   `const`;
// - objects: `properties`, `required`, `additionalProperties` (`false` or a schema),
//   `minProperties`, `maxProperties`;
// - arrays: `items` (one schema for every item), `minItems`, `maxItems`, `uniqueItems`;
// - numbers: `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`;
// - strings: `minLength`, `maxLength` (in code points), `pattern` (an ECMA-262 regular
//   expression, unanchored, as the draft says).
//
// `true` and `false` are schemas too (anything, nothing).

import { ErrorCode, ProviderError } from './errors.js';

/**
 * A problem with one field of a config.
 * @typedef {object} FieldError
 * @property {string} path JSON Pointer to the field, e.g. `/zones/2`; `""` for the document.
 * @property {string} message What is wrong with it.
 */

/**
 * A problem at `path`.
 * @param {string} path A JSON Pointer ({@link jsonPointer}).
 * @param {string} message
 * @returns {FieldError}
 */
export function fieldError(path, message) {
  return { path, message };
}

/**
 * The JSON Pointer of the unescaped tokens, e.g. `('zones', 2)` -> `/zones/2`.
 * @param {...(string | number)} tokens
 * @returns {string}
 */
export function jsonPointer(...tokens) {
  return tokens.map((t) => '/' + String(t).replaceAll('~', '~0').replaceAll('/', '~1')).join('');
}

/** A config that does not parse, or breaks its schema: the first problem, at its pointer. */
export class ConfigError extends Error {
  /**
   * @param {string} pointer JSON Pointer of the field at fault; `""` for the document.
   * @param {string} problem What is wrong.
   */
  constructor(pointer, problem) {
    super(pointer === '' ? `config: ${problem}` : `config at \`${pointer}\`: ${problem}`);
    this.name = 'ConfigError';
    this.pointer = pointer;
    this.problem = problem;
  }

  /** Invalid input: the same config fails again. */
  providerError() {
    return ProviderError.permanent(ErrorCode.InvalidInput, this.message);
  }
}

/** A config schema the SDK cannot check: not JSON, or beyond the subset it supports. */
export class SchemaError extends Error {
  /**
   * @param {string} pointer JSON Pointer into the schema.
   * @param {string} problem
   */
  constructor(pointer, problem) {
    super(`the config schema${pointer === '' ? '' : ` at \`${pointer}\``}: ${problem}`);
    this.name = 'SchemaError';
    this.pointer = pointer;
  }
}

const ANNOTATIONS = new Set([
  '$schema', '$id', '$comment', 'title', 'description', 'default', 'examples', 'deprecated',
  'readOnly', 'writeOnly',
  // capw's own: a property that does not shape a machine (contract.md, config-schema).
  'x-capw-shapes-machine',
]);
const TYPES = new Set(['null', 'boolean', 'object', 'array', 'number', 'string', 'integer']);
const COUNTS = ['minProperties', 'maxProperties', 'minItems', 'maxItems', 'minLength', 'maxLength'];
const BOUNDS = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'];

/** The keywords the SDK checks, each with the check of its value in a schema. */
const KEYWORDS = {
  type(value, at) {
    const names = Array.isArray(value) ? value : [value];
    if (names.length === 0 || !names.every((n) => TYPES.has(n))) {
      throw new SchemaError(at, `\`type\` must name types of JSON Schema, got ${JSON.stringify(value)}`);
    }
  },
  enum(value, at) {
    if (!Array.isArray(value) || value.length === 0) {
      throw new SchemaError(at, '`enum` must be a non-empty array');
    }
  },
  const() {},
  properties(value, at) {
    if (!isObject(value)) {
      throw new SchemaError(at, '`properties` must be an object of schemas');
    }
    for (const [name, schema] of Object.entries(value)) {
      compileNode(schema, at + jsonPointer('properties', name));
    }
  },
  required(value, at) {
    if (!Array.isArray(value) || !value.every((n) => typeof n === 'string')) {
      throw new SchemaError(at, '`required` must be an array of names');
    }
  },
  additionalProperties(value, at) {
    compileNode(value, at + '/additionalProperties');
  },
  items(value, at) {
    if (Array.isArray(value)) {
      throw new SchemaError(at, '`items` must be one schema (a list of schemas is `prefixItems`, which the SDK does not check)');
    }
    compileNode(value, at + '/items');
  },
  uniqueItems(value, at) {
    if (typeof value !== 'boolean') {
      throw new SchemaError(at, '`uniqueItems` must be a boolean');
    }
  },
  multipleOf(value, at) {
    if (typeof value !== 'number' || !(value > 0)) {
      throw new SchemaError(at, '`multipleOf` must be a number above 0');
    }
  },
  pattern(value, at) {
    if (typeof value !== 'string') {
      throw new SchemaError(at, '`pattern` must be a string');
    }
    try {
      new RegExp(value, 'u');
    } catch (e) {
      throw new SchemaError(at, `\`pattern\` is not a regular expression: ${e.message}`);
    }
  },
};
for (const name of COUNTS) {
  KEYWORDS[name] = (value, at) => {
    if (!Number.isInteger(value) || value < 0) {
      throw new SchemaError(at, `\`${name}\` must be a whole number`);
    }
  };
}
for (const name of BOUNDS) {
  KEYWORDS[name] = (value, at) => {
    if (typeof value !== 'number') {
      throw new SchemaError(at, `\`${name}\` must be a number`);
    }
  };
}

/** The keywords the SDK checks, for its documentation and tests. */
export const SUPPORTED_KEYWORDS = Object.freeze([...Object.keys(KEYWORDS)].sort());
/** The keywords the SDK reads as annotations and does not check. */
export const ANNOTATION_KEYWORDS = Object.freeze([...ANNOTATIONS].sort());

/** @param {unknown} v */
function isObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * Checks one schema node and its children; throws {@link SchemaError} at the first keyword the
 * SDK cannot check.
 * @param {unknown} node
 * @param {string} at
 */
function compileNode(node, at) {
  if (typeof node === 'boolean') {
    return;
  }
  if (!isObject(node)) {
    throw new SchemaError(at, 'a schema must be an object or a boolean');
  }
  for (const [keyword, value] of Object.entries(node)) {
    if (ANNOTATIONS.has(keyword)) {
      continue;
    }
    const check = KEYWORDS[keyword];
    if (check === undefined) {
      throw new SchemaError(
        at + jsonPointer(keyword),
        `\`${keyword}\` is not checked by the SDK's JSON Schema subset (sdk/js/README.md, "Config")`,
      );
    }
    check(value, at);
  }
}

/**
 * A provider's config schema, checked to be within the SDK's subset.
 */
export class ConfigSchema {
  /**
   * @param {object | boolean | string} schema The schema, or its JSON text.
   * @throws {SchemaError} when it is not JSON, or uses a keyword the SDK does not check.
   */
  constructor(schema) {
    let doc = schema;
    if (typeof schema === 'string') {
      try {
        doc = JSON.parse(schema);
      } catch (e) {
        throw new SchemaError('', `not JSON: ${e.message}`);
      }
    }
    compileNode(doc, '');
    /** The schema as a JSON value. */
    this.document = deepFreeze(structuredCopy(doc));
    /** The schema as the JSON text `describe` publishes. */
    this.text = JSON.stringify(this.document);
  }

  /**
   * Every place where `value` (a parsed JSON value) breaks the schema, in document order, each
   * at the JSON Pointer of the value at fault. A property the schema does not allow is reported
   * at its own pointer as `unknown field`; a missing one at the object that lacks it.
   * @param {unknown} value
   * @returns {FieldError[]}
   */
  check(value) {
    /** @type {FieldError[]} */
    const out = [];
    checkNode(this.document, value, '', out);
    return out;
  }

  /**
   * A copy of `value` with the schema's `default`s in place of the fields it leaves out, in
   * every object the schema describes (nested ones and list items included).
   * @template T
   * @param {T} value
   * @returns {T}
   */
  withDefaults(value) {
    return applyDefaults(this.document, structuredCopy(value));
  }
}

/**
 * `text` parsed as JSON, or the field error that says why not.
 * @param {string} text
 * @returns {{value: unknown} | {error: FieldError}}
 */
export function parseJson(text) {
  try {
    return { value: JSON.parse(text) };
  } catch (e) {
    return { error: fieldError('', `must be a JSON document: ${e.message}`) };
  }
}

/**
 * The config JSON `text` as a call receives it: parsed, checked against `schema`, with the
 * schema's defaults applied.
 * @param {ConfigSchema} schema
 * @param {string} text
 * @returns {any}
 * @throws {ConfigError} at the first problem: the host checked the config before the call, so
 *   a problem here is a config the provider cannot use.
 */
export function parseConfig(schema, text) {
  const parsed = parseJson(text);
  if ('error' in parsed) {
    throw new ConfigError(parsed.error.path, parsed.error.message);
  }
  const [first] = schema.check(parsed.value);
  if (first !== undefined) {
    throw new ConfigError(first.path, first.message);
  }
  return schema.withDefaults(parsed.value);
}

/**
 * What validate-config answers for the config JSON `text`: every problem the schema finds;
 * else every problem `validate` (the rules a schema cannot say) finds in the config with its
 * defaults applied. An empty list accepts the config.
 *
 * # Guarantees
 *
 * A refusal is never an empty list, and every path is a JSON Pointer.
 * @param {ConfigSchema} schema
 * @param {string} text
 * @param {((config: any) => (FieldError[] | undefined | void))} [validate]
 * @returns {FieldError[]}
 */
export function checkConfig(schema, text, validate) {
  const parsed = parseJson(text);
  if ('error' in parsed) {
    return [parsed.error];
  }
  const problems = schema.check(parsed.value);
  if (problems.length > 0 || validate === undefined) {
    return problems;
  }
  let found;
  try {
    found = validate(schema.withDefaults(parsed.value)) ?? [];
  } catch (e) {
    const path = e instanceof ConfigError ? e.pointer : '';
    const message = e instanceof ConfigError ? e.problem : `rejected: ${e?.message ?? String(e)}`;
    return [fieldError(path, message)];
  }
  if (!Array.isArray(found)) {
    return [fieldError('', 'config rejected: the provider\'s validate answered no list of field errors')];
  }
  return found.map((f) => fieldError(
    typeof f?.path === 'string' && isPointer(f.path) ? f.path : '',
    typeof f?.message === 'string' && f.message !== '' ? f.message : 'rejected by the provider',
  ));
}

/**
 * Whether `path` is a JSON Pointer: empty, or `/` tokens where `~` is always `~0` or `~1`.
 * @param {string} path
 */
export function isPointer(path) {
  return path === '' || /^(\/([^~/]|~[01])*)+$/u.test(path);
}

/** @param {unknown} value */
function typeOf(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

/**
 * @param {unknown} value
 * @param {string} type
 */
function hasType(value, type) {
  switch (type) {
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    default:
      return typeOf(value) === type;
  }
}

const ARTICLE = {
  null: 'null', boolean: 'a boolean', object: 'an object', array: 'an array',
  number: 'a number', string: 'a string', integer: 'an integer',
};

/**
 * @param {any} schema
 * @param {unknown} value
 * @param {string} at
 * @param {FieldError[]} out
 */
function checkNode(schema, value, at, out) {
  if (schema === true) return;
  if (schema === false) {
    out.push(fieldError(at, 'no value is allowed here'));
    return;
  }
  if (schema.type !== undefined) {
    const names = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!names.some((t) => hasType(value, t))) {
      out.push(fieldError(at, `must be ${names.map((t) => ARTICLE[t]).join(' or ')}`));
      return;
    }
  }
  if (schema.enum !== undefined && !schema.enum.some((e) => deepEqual(e, value))) {
    out.push(fieldError(at, `must be one of ${schema.enum.map((e) => JSON.stringify(e)).join(', ')}`));
  }
  if ('const' in schema && !deepEqual(schema.const, value)) {
    out.push(fieldError(at, `must be ${JSON.stringify(schema.const)}`));
  }
  if (isObject(value)) {
    checkObject(schema, /** @type {Record<string, unknown>} */ (value), at, out);
  } else if (Array.isArray(value)) {
    checkArray(schema, value, at, out);
  } else if (typeof value === 'number') {
    checkNumber(schema, value, at, out);
  } else if (typeof value === 'string') {
    checkString(schema, value, at, out);
  }
}

/**
 * @param {any} schema
 * @param {Record<string, unknown>} value
 * @param {string} at
 * @param {FieldError[]} out
 */
function checkObject(schema, value, at, out) {
  for (const name of schema.required ?? []) {
    if (!Object.hasOwn(value, name)) {
      out.push(fieldError(at, `missing field \`${name}\``));
    }
  }
  const count = Object.keys(value).length;
  if (schema.minProperties !== undefined && count < schema.minProperties) {
    out.push(fieldError(at, `must have at least ${schema.minProperties} fields`));
  }
  if (schema.maxProperties !== undefined && count > schema.maxProperties) {
    out.push(fieldError(at, `must have at most ${schema.maxProperties} fields`));
  }
  const properties = schema.properties ?? {};
  for (const [name, item] of Object.entries(value)) {
    const path = at + jsonPointer(name);
    if (Object.hasOwn(properties, name)) {
      checkNode(properties[name], item, path, out);
    } else if (schema.additionalProperties === false) {
      out.push(fieldError(path, 'unknown field'));
    } else if (schema.additionalProperties !== undefined) {
      checkNode(schema.additionalProperties, item, path, out);
    }
  }
}

/**
 * @param {any} schema
 * @param {unknown[]} value
 * @param {string} at
 * @param {FieldError[]} out
 */
function checkArray(schema, value, at, out) {
  if (schema.minItems !== undefined && value.length < schema.minItems) {
    out.push(fieldError(at, `must have at least ${schema.minItems} items`));
  }
  if (schema.maxItems !== undefined && value.length > schema.maxItems) {
    out.push(fieldError(at, `must have at most ${schema.maxItems} items`));
  }
  value.forEach((item, i) => {
    if (schema.items !== undefined) {
      checkNode(schema.items, item, at + jsonPointer(i), out);
    }
    if (schema.uniqueItems === true) {
      const first = value.findIndex((other) => deepEqual(other, item));
      if (first < i) {
        out.push(fieldError(at + jsonPointer(i), `repeats item ${first}`));
      }
    }
  });
}

/**
 * @param {any} schema
 * @param {number} value
 * @param {string} at
 * @param {FieldError[]} out
 */
function checkNumber(schema, value, at, out) {
  if (schema.minimum !== undefined && value < schema.minimum) {
    out.push(fieldError(at, `must be at least ${schema.minimum}`));
  }
  if (schema.maximum !== undefined && value > schema.maximum) {
    out.push(fieldError(at, `must be at most ${schema.maximum}`));
  }
  if (schema.exclusiveMinimum !== undefined && value <= schema.exclusiveMinimum) {
    out.push(fieldError(at, `must be above ${schema.exclusiveMinimum}`));
  }
  if (schema.exclusiveMaximum !== undefined && value >= schema.exclusiveMaximum) {
    out.push(fieldError(at, `must be below ${schema.exclusiveMaximum}`));
  }
  if (schema.multipleOf !== undefined && !Number.isInteger(value / schema.multipleOf)) {
    out.push(fieldError(at, `must be a multiple of ${schema.multipleOf}`));
  }
}

/**
 * @param {any} schema
 * @param {string} value
 * @param {string} at
 * @param {FieldError[]} out
 */
function checkString(schema, value, at, out) {
  const length = [...value].length;
  if (schema.minLength !== undefined && length < schema.minLength) {
    out.push(fieldError(at, schema.minLength === 1 ? 'must not be empty' : `must be at least ${schema.minLength} characters long`));
  }
  if (schema.maxLength !== undefined && length > schema.maxLength) {
    out.push(fieldError(at, `must be at most ${schema.maxLength} characters long`));
  }
  if (schema.pattern !== undefined && !new RegExp(schema.pattern, 'u').test(value)) {
    out.push(fieldError(at, `must match the pattern ${schema.pattern}`));
  }
}

/**
 * @param {any} schema
 * @param {any} value
 * @returns {any}
 */
function applyDefaults(schema, value) {
  if (typeof schema !== 'object' || schema === null) {
    return value;
  }
  if (value === undefined && 'default' in schema) {
    value = structuredCopy(schema.default);
  }
  if (isObject(value) && isObject(schema.properties)) {
    for (const [name, sub] of Object.entries(schema.properties)) {
      const filled = applyDefaults(sub, value[name]);
      if (filled !== undefined) {
        value[name] = filled;
      }
    }
  }
  if (Array.isArray(value) && schema.items !== undefined) {
    for (let i = 0; i < value.length; i++) {
      value[i] = applyDefaults(schema.items, value[i]);
    }
  }
  return value;
}

/**
 * Equality of JSON values, as `enum`, `const` and `uniqueItems` compare them (`1` and `1.0`
 * are one number; key order does not matter).
 * @param {unknown} a
 * @param {unknown} b
 * @returns {boolean}
 */
export function deepEqual(a, b) {
  if (a === b) return true;
  if (typeOf(a) !== typeOf(b) || typeof a !== 'object' || a === null) return false;
  if (Array.isArray(a)) {
    const other = /** @type {unknown[]} */ (b);
    return a.length === other.length && a.every((x, i) => deepEqual(x, other[i]));
  }
  const ka = Object.keys(/** @type {object} */ (a));
  const kb = Object.keys(/** @type {object} */ (b));
  const x = /** @type {Record<string, unknown>} */ (a);
  const y = /** @type {Record<string, unknown>} */ (b);
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(y, k) && deepEqual(x[k], y[k]));
}

/**
 * A deep copy of a JSON value.
 * @template T
 * @param {T} value
 * @returns {T}
 */
function structuredCopy(value) {
  return value === undefined ? value : JSON.parse(JSON.stringify(value));
}

/**
 * @template T
 * @param {T} value
 * @returns {T}
 */
function deepFreeze(value) {
  if (value !== null && typeof value === 'object') {
    Object.values(value).forEach(deepFreeze);
    Object.freeze(value);
  }
  return value;
}
