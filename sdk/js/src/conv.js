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

/** The largest value of a WIT `u64`. */
const U64_MAX = 0xffff_ffff_ffff_ffffn;

/**
 * A WIT `u64`, which a component passes as a `BigInt`: a whole number of either kind (a
 * `number` must be a safe integer, so that no digit was lost before it got here).
 * @param {unknown} value
 * @param {string} where
 * @returns {bigint}
 */
export function u64(value, where) {
  const whole = typeof value === 'bigint' || Number.isSafeInteger(value);
  if (!whole || BigInt(/** @type {number | bigint} */ (value)) < 0n || BigInt(/** @type {number | bigint} */ (value)) > U64_MAX) {
    throw new MalformedAnswer(where, `must be a whole number from 0 to ${U64_MAX} (a BigInt or a safe integer), got ${String(value)}`);
  }
  return BigInt(/** @type {number | bigint} */ (value));
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

/** `[a-z0-9]{n}`: the form of a bootstrap token's parts Kubernetes accepts. */
const tokenPart = (n) => new RegExp(`^[a-z0-9]{${n}}$`, 'u');
const TOKEN_ID = tokenPart(6);
const TOKEN_SECRET = tokenPart(16);
/** The prefix the API server requires of a bootstrap token's extra groups. */
export const BOOTSTRAP_GROUP_PREFIX = 'system:bootstrappers:';

/**
 * A join token as the provider answers it, checked for the form the workload cluster accepts.
 * The secret part is never echoed into a message.
 * @param {any} value A `JoinToken` (types.js).
 * @param {string} where
 */
export function joinTokenToWit(value, where) {
  if (value === null || typeof value !== 'object') {
    throw new MalformedAnswer(where, 'must be a JoinToken {item, id, secret, ttlSeconds, extraGroups}');
  }
  const id = str(value.id, `${where}.id`);
  if (!TOKEN_ID.test(id)) {
    throw new MalformedAnswer(`${where}.id`, `must be 6 characters of [a-z0-9], got ${JSON.stringify(id)}`);
  }
  if (!TOKEN_SECRET.test(str(value.secret, `${where}.secret`))) {
    throw new MalformedAnswer(`${where}.secret`, 'must be 16 characters of [a-z0-9]');
  }
  return {
    item: str(value.item, `${where}.item`),
    id,
    secret: value.secret,
    ttlSeconds: u64(value.ttlSeconds, `${where}.ttlSeconds`),
    extraGroups: list(value.extraGroups, `${where}.extraGroups`, (g, w) => {
      if (!str(g, w).startsWith(BOOTSTRAP_GROUP_PREFIX)) {
        throw new MalformedAnswer(w, `must start with ${BOOTSTRAP_GROUP_PREFIX}, got ${JSON.stringify(g)}`);
      }
      return g;
    }),
  };
}

/**
 * A join token as the host passes it in, frozen.
 * @param {any} token
 * @returns {import('./types.js').JoinToken}
 */
export function joinTokenFromWit(token) {
  return Object.freeze({ ...token, extraGroups: Object.freeze([...(token.extraGroups ?? [])]) });
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
