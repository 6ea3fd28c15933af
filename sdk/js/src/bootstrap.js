// The `bootstrap` extension point: cluster secrets and the data that turns a machine into a
// node.
//
// A provider serves it with an object (or class instance) with any of these methods; the ones
// it leaves out answer `unsupported`:
//
//     clusterSecrets(ctx)                -> SecretsState.ready(items) | SecretsState.inProgress(p)
//     generate(ctx, request)             -> {format, data}
//     kubeconfig(ctx, endpoint, secrets) -> string
//     currentJoinToken(ctx, secrets)     -> JoinToken | undefined     (0.3; left out: undefined)
//     renewJoinToken(ctx, secrets)       -> JoinToken                 (0.3)
//
// `currentJoinToken` is the exception: left out, it answers `undefined` (the contract's `none`:
// the provider's join data carries no token for the host to keep valid), as the Rust SDK's
// default does. The host then never calls `renewJoinToken`.
//
// Secret material (items' data, bootstrap data, kubeconfigs, a token's secret) is never logged
// nor put in a message.

import {
  MalformedAnswer, bytes, inProgressToWit, joinTokenFromWit, joinTokenToWit, list, oneOf, option, str,
  versionFromWit,
} from './conv.js';

/** Formats of bootstrap data. */
export const BootstrapFormat = Object.freeze({
  CloudConfig: 'cloud-config',
  Ignition: 'ignition',
  Raw: 'raw',
});
const FORMATS = Object.values(BootstrapFormat);

/**
 * One named piece of secret material; `data` may be given as text (sent as UTF-8), and
 * arrives as bytes.
 * @typedef {{name: string, data: Uint8Array | string}} SecretItem
 */

/**
 * @typedef {{kind: 'ready', items: SecretItem[]}
 *   | {kind: 'in-progress', progress: import('./types.js').InProgress}} SecretsStateAnswer
 */

/** The answers of `clusterSecrets`. */
export const SecretsState = Object.freeze({
  /**
   * @param {SecretItem[]} items
   * @returns {SecretsStateAnswer}
   */
  ready: (items) => ({ kind: 'ready', items }),
  /**
   * Key generation is slow; the host calls again and other clusters go on meanwhile.
   * @param {import('./types.js').InProgress} progress
   * @returns {SecretsStateAnswer}
   */
  inProgress: (progress) => ({ kind: 'in-progress', progress }),
});

/**
 * How a worker joins a control plane a service runs (the hosted and managed shapes), as the
 * control-plane provider had it from the service; since contract 0.3. With it, the request's
 * `secrets` are empty: the cluster's CAs are the service's.
 * @typedef {object} JoinCredentials
 * @property {string} caCertificate The certificate authority the control plane's API server
 *   certificate chains to (PEM): what a join pins (kubeadm's `caCertHashes`).
 * @property {import('./types.js').JoinToken | undefined} token The token a join authenticates
 *   with, issued and kept valid by the service; `undefined` when the service needs none.
 */

/**
 * What `generate` is asked for.
 * @typedef {object} BootstrapRequest
 * @property {import('./types.js').MachineRef} machine
 * @property {import('./types.js').MachineRole} role
 * @property {import('./types.js').KubernetesVersion} version
 * @property {import('./types.js').Endpoint} endpoint
 * @property {{name: string, data: Uint8Array}[]} secrets The items `clusterSecrets` made;
 *   empty when `join` is given.
 * @property {import('./types.js').MachineRef[]} controlPlaneMembers Empty for `init`.
 * @property {JoinCredentials | undefined} join How to join a service's control plane;
 *   `undefined` for the machines shape, whose joins come from `secrets` (0.3).
 */

/**
 * @param {any} join
 * @returns {JoinCredentials}
 */
function joinCredentialsFromWit(join) {
  return Object.freeze({ caCertificate: join.caCertificate, token: option(join.token, joinTokenFromWit) });
}

/**
 * @param {any} request
 * @returns {BootstrapRequest}
 */
export function bootstrapRequestFromWit(request) {
  return Object.freeze({
    ...request,
    version: versionFromWit(request.version),
    join: option(request.join, joinCredentialsFromWit),
  });
}

/**
 * @param {any} items
 * @param {string} where
 */
function itemsToWit(items, where) {
  return list(items, where, (item, w) => ({ name: str(item?.name, `${w}.name`), data: bytes(item?.data, `${w}.data`) }));
}

/** @param {any} answer */
export function secretsStateToWit(answer) {
  const where = 'clusterSecrets';
  switch (answer?.kind) {
    case 'ready':
      return { tag: 'ready', val: itemsToWit(answer.items, `${where}.items`) };
    case 'in-progress':
      return { tag: 'in-progress', val: inProgressToWit(answer.progress, `${where}.progress`) };
    default:
      throw new MalformedAnswer(where, 'must answer SecretsState.ready(...) or SecretsState.inProgress(...)');
  }
}

/** @param {any} data */
export function bootstrapDataToWit(data) {
  return {
    format: oneOf(data?.format, 'generate.format', FORMATS),
    data: bytes(data?.data, 'generate.data'),
  };
}

/** @param {any} text */
export function kubeconfigToWit(text) {
  return str(text, 'kubeconfig');
}

/** @param {any} token */
export function currentJoinTokenToWit(token) {
  return option(token, (t) => joinTokenToWit(t, 'currentJoinToken'));
}

/** @param {any} token */
export function renewedJoinTokenToWit(token) {
  return joinTokenToWit(token, 'renewJoinToken');
}

/**
 * The answers of the methods a provider may leave out other than with `unsupported`.
 * @type {Readonly<Record<string, (ctx: unknown, ...args: any[]) => unknown>>}
 */
export const BOOTSTRAP_DEFAULTS = Object.freeze({
  /** No token for the host to keep valid. */
  currentJoinToken: () => undefined,
});
