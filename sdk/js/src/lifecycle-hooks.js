// The optional `lifecycle-hooks` extension point, after Cluster API's Runtime SDK.
//
// A provider serves it with an object (or class instance) with one method:
//
//     lifecycleHooks: {
//       handle(ctx, request) { return HookResponse.proceed; },
//     }
//
// `handle` is called at each hook point until it answers `proceed`; `hold` holds only that
// transition until the next call. It must be idempotent: the host may call the same hook more
// than once, with the same idempotency key.

import { MalformedAnswer, inProgressToWit, option, versionFromWit } from './conv.js';

/**
 * @typedef {'before-cluster-create' | 'after-control-plane-initialized' | 'before-cluster-upgrade'
 *   | 'after-control-plane-upgrade' | 'after-cluster-upgrade' | 'before-cluster-delete'} HookName
 */

/** The hook points, by the contract's names, in its order. */
export const Hook = Object.freeze({
  BeforeClusterCreate: 'before-cluster-create',
  AfterControlPlaneInitialized: 'after-control-plane-initialized',
  BeforeClusterUpgrade: 'before-cluster-upgrade',
  AfterControlPlaneUpgrade: 'after-control-plane-upgrade',
  AfterClusterUpgrade: 'after-cluster-upgrade',
  BeforeClusterDelete: 'before-cluster-delete',
});

/** Every hook point, in the contract's order. */
export const HOOKS = Object.freeze(Object.values(Hook));

/**
 * The hook being called.
 * @typedef {object} HookRequest
 * @property {HookName} hook
 * @property {import('./types.js').KubernetesVersion | undefined} fromVersion The version before
 *   an upgrade; `undefined` outside upgrades.
 * @property {import('./types.js').KubernetesVersion} toVersion The version the cluster has, or
 *   goes to.
 */

/**
 * @typedef {{kind: 'proceed'} | {kind: 'hold', progress: import('./types.js').InProgress}} HookAnswer
 */

/** The answers of `handle`. */
export const HookResponse = Object.freeze({
  /** Go on. */
  proceed: Object.freeze({ kind: 'proceed' }),
  /**
   * Hold this transition (only this one) and call again after the progress's hint.
   * @param {import('./types.js').InProgress} progress
   * @returns {HookAnswer}
   */
  hold: (progress) => ({ kind: 'hold', progress }),
});

/**
 * @param {{hook: HookName, fromVersion?: any, toVersion: any}} request
 * @returns {HookRequest}
 */
export function hookRequestFromWit(request) {
  return Object.freeze({
    hook: request.hook,
    fromVersion: option(request.fromVersion, versionFromWit),
    toVersion: versionFromWit(request.toVersion),
  });
}

/** @param {any} answer */
export function hookResponseToWit(answer) {
  switch (answer?.kind) {
    case 'proceed':
      return { tag: 'proceed' };
    case 'hold':
      return { tag: 'hold', val: inProgressToWit(answer.progress, 'handle.progress') };
    default:
      throw new MalformedAnswer('handle', 'must answer HookResponse.proceed or HookResponse.hold(...)');
  }
}
