// Conversions between the SDK's values and the contract's shapes as componentize-js passes
// them: one function per type and direction, used by the extension points' glue.
//
// A provider's answer that does not fit the contract (a negative replica count, a port above
// 65535, a step of no known kind) is a `MalformedAnswer`; the glue answers the call with a
// permanent `internal` error naming the field, rather than trapping.

import { ErrorCode, ProviderError, U32_MAX } from './errors.js';
import { KubernetesVersion } from './types.js';

/** An answer of the provider that does not fit the contract. */
export class MalformedAnswer extends TypeError {
  /**
   * @param {string} where The field, e.g. `plan.replicas`.
   * @param {string} problem
   */
  constructor(where, problem) {
    super(`${where}: ${problem}`);
    this.name = 'MalformedAnswer';
  }

  /** A bug of the provider: the same call answers the same. */
  providerError() {
    return ProviderError.permanent(ErrorCode.Internal, `the provider answered a malformed value: ${this.message}`);
  }
}

/**
 * @param {unknown} value
 * @param {string} where
 * @returns {string}
 */
export function str(value, where) {
  if (typeof value !== 'string') {
    throw new MalformedAnswer(where, `must be a string, got ${typeof value}`);
  }
  return value;
}

/**
 * @param {unknown} value
 * @param {string} where
 * @param {number} [max]
 * @returns {number}
 */
export function uint(value, where, max = U32_MAX) {
  if (!Number.isInteger(value) || /** @type {number} */ (value) < 0 || /** @type {number} */ (value) > max) {
    throw new MalformedAnswer(where, `must be a whole number from 0 to ${max}, got ${String(value)}`);
  }
  return /** @type {number} */ (value);
}

/**
 * @param {unknown} value
 * @param {string} where
 * @returns {boolean}
 */
export function bool(value, where) {
  if (typeof value !== 'boolean') {
    throw new MalformedAnswer(where, `must be a boolean, got ${typeof value}`);
  }
  return value;
}

/**
 * `undefined` and `null` are the contract's `none`.
 * @template T
 * @param {unknown} value
 * @param {(v: any) => T} convert
 * @returns {T | undefined}
 */
export function option(value, convert) {
  return value === undefined || value === null ? undefined : convert(value);
}

/**
 * @template T
 * @param {unknown} value
 * @param {string} where
 * @param {(v: any, where: string) => T} convert
 * @returns {T[]}
 */
export function list(value, where, convert) {
  if (value === undefined) {
    return [];
  }
  if (!Array.isArray(value)) {
    throw new MalformedAnswer(where, 'must be an array');
  }
  return value.map((v, i) => convert(v, `${where}[${i}]`));
}

/**
 * A string is sent as UTF-8.
 * @param {unknown} value
 * @param {string} where
 * @returns {Uint8Array}
 */
export function bytes(value, where) {
  if (typeof value === 'string') {
    return new TextEncoder().encode(value);
  }
  if (value instanceof Uint8Array) {
    return value;
  }
  throw new MalformedAnswer(where, 'must be a Uint8Array or a string');
}

/**
 * @param {unknown} value
 * @param {string} where
 * @param {readonly string[]} names
 * @returns {string}
 */
export function oneOf(value, where, names) {
  if (typeof value !== 'string' || !names.includes(value)) {
    throw new MalformedAnswer(where, `must be one of ${names.join(', ')}, got ${JSON.stringify(value)}`);
  }
  return value;
}

/** @param {{major: number, minor: number, patch: number}} v */
export function versionFromWit(v) {
  return new KubernetesVersion(v.major, v.minor, v.patch);
}

/**
 * @param {unknown} value A `KubernetesVersion`, its text or the record.
 * @param {string} where
 */
export function versionToWit(value, where) {
  try {
    const v = KubernetesVersion.from(/** @type {any} */ (value));
    return { major: uint(v.major, where), minor: uint(v.minor, where), patch: uint(v.patch, where) };
  } catch (e) {
    throw e instanceof MalformedAnswer ? e : new MalformedAnswer(where, e.message);
  }
}

/**
 * @param {any} value
 * @param {string} where
 */
export function endpointToWit(value, where) {
  return { host: str(value?.host, `${where}.host`), port: uint(value?.port, `${where}.port`, 0xffff) };
}

/**
 * @param {any} value
 * @param {string} where
 */
export function machineRefToWit(value, where) {
  return { name: str(value?.name, `${where}.name`), uid: str(value?.uid, `${where}.uid`) };
}

/**
 * @param {any} value
 * @param {string} where
 */
export function conditionToWit(value, where) {
  return {
    type: str(value?.type, `${where}.type`),
    status: oneOf(value?.status, `${where}.status`, ['true', 'false', 'unknown']),
    reason: str(value?.reason, `${where}.reason`),
    message: str(value?.message ?? '', `${where}.message`),
  };
}

/**
 * @param {any} value An `InProgress`, or an object of its fields.
 * @param {string} where
 */
export function inProgressToWit(value, where) {
  if (value === null || typeof value !== 'object') {
    throw new MalformedAnswer(where, 'must be an InProgress');
  }
  return {
    reason: str(value.reason, `${where}.reason`),
    message: str(value.message ?? '', `${where}.message`),
    requeueAfterMs: uint(value.requeueAfterMs, `${where}.requeueAfterMs`),
    conditions: list(value.conditions, `${where}.conditions`, conditionToWit),
  };
}

/**
 * @param {any} value
 * @param {string} where
 */
export function deletionToWit(value, where) {
  switch (value?.kind) {
    case 'deleted':
      return { tag: 'deleted' };
    case 'in-progress':
      return { tag: 'in-progress', val: inProgressToWit(value.progress, `${where}.progress`) };
    default:
      throw new MalformedAnswer(where, 'must be Deletion.deleted or Deletion.inProgress(...)');
  }
}

/**
 * The contract's `provider-error` of a `ProviderError`.
 * @param {ProviderError} e
 */
export function providerErrorToWit(e) {
  return {
    code: e.code,
    message: e.message,
    retryable: e.retryable,
    retryAfterMs: e.retryAfterMs,
  };
}
