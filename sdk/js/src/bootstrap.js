// The `bootstrap` extension point: cluster secrets and the data that turns a machine into a
// node.
//
// A provider serves it with an object (or class instance) with any of these methods; the ones
// it leaves out answer `unsupported`:
//
//     clusterSecrets(ctx)                -> SecretsState.ready(items) | SecretsState.inProgress(p)
//     generate(ctx, request)             -> {format, data}
//     kubeconfig(ctx, endpoint, secrets) -> string
//
// Secret material (items' data, bootstrap data, kubeconfigs) is never logged nor put in a
// message.

import { MalformedAnswer, bytes, inProgressToWit, list, oneOf, str, versionFromWit } from './conv.js';

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

/** @param {any} request */
export function bootstrapRequestFromWit(request) {
  return Object.freeze({ ...request, version: versionFromWit(request.version) });
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
