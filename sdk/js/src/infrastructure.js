// The `infrastructure` extension point: networks, the control-plane endpoint and machines.
//
// A provider serves it with an object (or class instance) with any of these methods; the ones
// it leaves out answer `unsupported`:
//
//     reconcileCluster(ctx)              -> ClusterState.ready({...}) | ClusterState.inProgress(p)
//     deleteCluster(ctx)                 -> Deletion.deleted | Deletion.inProgress(p)
//     reconcileMachine(ctx, spec)        -> MachineStatus
//     deleteMachine(ctx, machine)        -> Deletion.deleted | Deletion.inProgress(p)
//     listMachines(ctx)                  -> ListedMachine[]

import {
  MalformedAnswer, conditionToWit, endpointToWit, inProgressToWit, list, oneOf, option, str, uint,
  versionFromWit,
} from './conv.js';

/** Lifecycle phases of a machine, as the infrastructure sees it. */
export const MachinePhase = Object.freeze({
  /** Accepted, not yet started. */
  Pending: 'pending',
  /** Being created or booting. */
  Provisioning: 'provisioning',
  /** Running and its node is ready. */
  Running: 'running',
  /** Failed for good; the message says why. The host deletes and replaces it. */
  Failed: 'failed',
  /** Being deleted. */
  Deleting: 'deleting',
});
const PHASES = Object.values(MachinePhase);
const ADDRESS_KINDS = ['hostname', 'internal-ip', 'external-ip', 'internal-dns', 'external-dns'];

/**
 * @typedef {object} ClusterInfrastructure The cluster-wide infrastructure, once it exists.
 * @property {import('./types.js').Endpoint} [controlPlaneEndpoint] Where the API server will be
 *   reached (e.g. a load balancer); left out when the infrastructure makes no endpoint because
 *   the control plane is a service's, which reports its own (0.3; before, an endpoint with an
 *   empty host said so).
 * @property {{name: string, controlPlane: boolean}[]} [failureDomains]
 * @property {import('./types.js').Condition[]} [conditions]
 */

/**
 * @typedef {{kind: 'ready', infrastructure: ClusterInfrastructure}
 *   | {kind: 'in-progress', progress: import('./types.js').InProgress}} ClusterStateAnswer
 */

/** The answers of `reconcileCluster`. */
export const ClusterState = Object.freeze({
  /**
   * @param {ClusterInfrastructure} infrastructure
   * @returns {ClusterStateAnswer}
   */
  ready: (infrastructure) => ({ kind: 'ready', infrastructure }),
  /**
   * @param {import('./types.js').InProgress} progress
   * @returns {ClusterStateAnswer}
   */
  inProgress: (progress) => ({ kind: 'in-progress', progress }),
});

/**
 * What the infrastructure knows of a machine; the fields left out are `undefined`, empty or
 * `''`.
 * @typedef {object} MachineStatus
 * @property {'pending' | 'provisioning' | 'running' | 'failed' | 'deleting'} phase
 * @property {string} [providerId] Cloud id; unset until the cloud assigned one.
 * @property {{kind: string, address: string}[]} [addresses]
 * @property {string} [failureDomain]
 * @property {string} [message]
 * @property {number} [requeueAfterMs] When the phase is not `running` or `failed`: when to
 *   look again.
 * @property {import('./types.js').Condition[]} [conditions]
 */

/**
 * A machine found in the infrastructure for a cluster.
 * @typedef {object} ListedMachine
 * @property {string} idempotencyKey The key it was created with.
 * @property {string} providerId
 * @property {string} machineName
 * @property {'pending' | 'provisioning' | 'running' | 'failed' | 'deleting'} phase
 */

/** @param {any} spec */
export function machineSpecFromWit(spec) {
  return Object.freeze({ ...spec, version: versionFromWit(spec.version) });
}

/** @param {any} answer */
export function clusterStateToWit(answer) {
  const where = 'reconcileCluster';
  switch (answer?.kind) {
    case 'ready': {
      const infra = answer.infrastructure ?? {};
      return {
        tag: 'ready',
        val: {
          controlPlaneEndpoint: option(infra.controlPlaneEndpoint, (e) => endpointToWit(e, `${where}.controlPlaneEndpoint`)),
          failureDomains: list(infra.failureDomains, `${where}.failureDomains`, (d, w) => ({
            name: str(d?.name, `${w}.name`),
            controlPlane: Boolean(d?.controlPlane),
          })),
          conditions: list(infra.conditions, `${where}.conditions`, conditionToWit),
        },
      };
    }
    case 'in-progress':
      return { tag: 'in-progress', val: inProgressToWit(answer.progress, `${where}.progress`) };
    default:
      throw new MalformedAnswer(where, 'must answer ClusterState.ready(...) or ClusterState.inProgress(...)');
  }
}

/** @param {any} status */
export function machineStatusToWit(status) {
  const where = 'reconcileMachine';
  if (status === null || typeof status !== 'object') {
    throw new MalformedAnswer(where, 'must answer a MachineStatus');
  }
  return {
    providerId: option(status.providerId, (v) => str(v, `${where}.providerId`)),
    phase: oneOf(status.phase, `${where}.phase`, PHASES),
    addresses: list(status.addresses, `${where}.addresses`, (a, w) => ({
      kind: oneOf(a?.kind, `${w}.kind`, ADDRESS_KINDS),
      address: str(a?.address, `${w}.address`),
    })),
    failureDomain: option(status.failureDomain, (v) => str(v, `${where}.failureDomain`)),
    message: str(status.message ?? '', `${where}.message`),
    requeueAfterMs: option(status.requeueAfterMs, (v) => uint(v, `${where}.requeueAfterMs`)),
    conditions: list(status.conditions, `${where}.conditions`, conditionToWit),
  };
}

/** @param {any} machines */
export function listedMachinesToWit(machines) {
  return list(machines, 'listMachines', (m, w) => ({
    idempotencyKey: str(m?.idempotencyKey, `${w}.idempotencyKey`),
    providerId: str(m?.providerId, `${w}.providerId`),
    machineName: str(m?.machineName, `${w}.machineName`),
    phase: oneOf(m?.phase, `${w}.phase`, PHASES),
  }));
}
