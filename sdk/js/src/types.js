// Types shared by every extension point, and constructors that make the common answers short.
//
// Records of the contract (a cluster, a machine, an endpoint) are plain objects with the
// contract's fields in camelCase. What the contract spells as a variant (an answer that is one
// of several cases) is built here, with a `kind` field the SDK turns into the contract's shape.

import { millis } from './errors.js';

/**
 * @typedef {object} ClusterRef Identity of the cluster a call concerns.
 * @property {string} namespace Namespace of the Cluster object (`default` in the local mode).
 * @property {string} name Name of the Cluster object.
 * @property {string} uid Unique id of the Cluster; changes when one of the same name is
 *   recreated.
 */

/**
 * @typedef {object} MachineRef Identity of a machine inside its cluster.
 * @property {string} name Name of the Machine object, unique within the cluster.
 * @property {string} uid Unique id of the Machine object.
 */

/**
 * @typedef {object} Endpoint Where the cluster's API server is reached.
 * @property {string} host
 * @property {number} port
 */

/** @typedef {'init' | 'join-control-plane' | 'worker'} MachineRole What a machine is for. */

/**
 * @typedef {object} Condition A condition as in Kubernetes `metav1.Condition`; the host
 *   prefixes its type with the extension point.
 * @property {string} type CamelCase, e.g. `NetworkReady`.
 * @property {'true' | 'false' | 'unknown'} status
 * @property {string} reason CamelCase, e.g. `WaitingForLoadBalancer`.
 * @property {string} message For humans; never secret material.
 */

/**
 * @typedef {object} JoinToken A bootstrap token (Kubernetes' Secret type
 *   `bootstrap.kubernetes.io/token`): the credential a joining machine's data carries and the
 *   workload cluster must still accept. Since contract 0.3.
 * @property {string} item The item of the cluster's secrets that holds it as `<id>.<secret>`,
 *   which `generate` reads; the host replaces that item when it renews the token.
 * @property {string} id `[a-z0-9]{6}`, public: the workload cluster keeps the token as Secret
 *   `kube-system/bootstrap-token-<id>`.
 * @property {string} secret `[a-z0-9]{16}`. Secret: never log it.
 * @property {bigint | number} ttlSeconds How long the workload cluster accepts it from when it
 *   is written there; 0: it never expires. A `u64`: a `BigInt` when the host passes it in; a
 *   provider may answer a `number` too.
 * @property {string[]} extraGroups Groups it authenticates as besides `system:bootstrappers`,
 *   each starting with `system:bootstrappers:`.
 */

/** A Kubernetes release, e.g. `v1.35.2`. */
export class KubernetesVersion {
  /**
   * @param {number} major
   * @param {number} minor
   * @param {number} patch
   */
  constructor(major, minor, patch = 0) {
    for (const [name, value] of /** @type {[string, number][]} */ ([['major', major], ['minor', minor], ['patch', patch]])) {
      if (!Number.isInteger(value) || value < 0) {
        throw new TypeError(`kubernetes version: ${name} must be a whole number, got ${value}`);
      }
    }
    this.major = major;
    this.minor = minor;
    this.patch = patch;
    Object.freeze(this);
  }

  /**
   * `v1.35.2` (or `1.35.2`) as a version.
   * @param {string} text
   * @returns {KubernetesVersion}
   */
  static parse(text) {
    const m = /^v?(\d+)\.(\d+)\.(\d+)$/.exec(text);
    if (m === null) {
      throw new TypeError(`kubernetes version: ${JSON.stringify(text)} is not vMAJOR.MINOR.PATCH`);
    }
    return new KubernetesVersion(Number(m[1]), Number(m[2]), Number(m[3]));
  }

  /**
   * A version from the contract's record, a `KubernetesVersion`, or its text.
   * @param {KubernetesVersion | {major: number, minor: number, patch: number} | string} value
   * @returns {KubernetesVersion}
   */
  static from(value) {
    if (value instanceof KubernetesVersion) {
      return value;
    }
    if (typeof value === 'string') {
      return KubernetesVersion.parse(value);
    }
    return new KubernetesVersion(value.major, value.minor, value.patch);
  }

  /**
   * Negative, zero or positive as this version is older than, the same as or newer than
   * `other`.
   * @param {KubernetesVersion} other
   */
  compare(other) {
    return this.major - other.major || this.minor - other.minor || this.patch - other.patch;
  }

  /** Kubernetes spelling: `v1.35.2`. */
  toString() {
    return `v${this.major}.${this.minor}.${this.patch}`;
  }
}

/** The requeue hint a new {@link InProgress} starts with, in milliseconds. */
export const DEFAULT_REQUEUE_AFTER_MS = 5000;

/**
 * The answer of a call whose work has started and not finished: the host records the message
 * and calls the same function again, with the same idempotency key, after `requeueAfterMs`
 * (or sooner, if something changes). A provider never waits instead.
 */
export class InProgress {
  /**
   * @param {string} reason A CamelCase word for the work, e.g. `InstanceBooting`.
   * @param {string} message The detail the host shows.
   */
  constructor(reason, message) {
    this.reason = reason;
    this.message = message;
    /** Hint for when to call again, in milliseconds. */
    this.requeueAfterMs = DEFAULT_REQUEUE_AFTER_MS;
    /** @type {Condition[]} Conditions to show while the work goes on. */
    this.conditions = [];
  }

  /**
   * Sets the hint for when the host should call again; saturates at the largest `u32`.
   * @param {number} ms
   * @returns {this}
   */
  requeueAfter(ms) {
    this.requeueAfterMs = millis(ms);
    return this;
  }

  /**
   * Adds a condition for the host to show while the work goes on.
   * @param {Condition} c
   * @returns {this}
   */
  withCondition(c) {
    this.conditions.push(c);
    return this;
  }
}

/**
 * A condition: `type` and `reason` are CamelCase; `status` is `'true'`, `'false'`,
 * `'unknown'` or a boolean.
 * @param {string} type
 * @param {'true' | 'false' | 'unknown' | boolean} status
 * @param {string} reason
 * @param {string} [message]
 * @returns {Condition}
 */
export function condition(type, status, reason, message = '') {
  const s = status === true ? 'true' : status === false ? 'false' : status;
  return { type, status: s, reason, message };
}

/**
 * @typedef {{kind: 'deleted'} | {kind: 'in-progress', progress: InProgress}} DeletionAnswer
 */

/** The answer of a delete. */
export const Deletion = Object.freeze({
  /** Nothing is left; also the answer when there was nothing to delete. */
  deleted: Object.freeze({ kind: 'deleted' }),
  /**
   * Deletion has started; call again.
   * @param {InProgress} progress
   * @returns {DeletionAnswer}
   */
  inProgress: (progress) => ({ kind: 'in-progress', progress }),
});
