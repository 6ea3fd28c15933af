// The `control-plane` extension point: the next safe step toward the desired control plane.
//
// A provider serves it with an object (or class instance) that declares its shape and
// capabilities beside its one method:
//
//     controlPlane: {
//       shape: ControlPlaneShape.Machines,  // required: machines, hosted or managed
//       scalable: true,                     // the replica count can change after creation
//       versionUpgrades: true,              // the version can be upgraded in place
//       plan(ctx, input) { return {step: Step.none, status: {...}, replicas, ...}; },
//     }
//
// `plan` is pure and deterministic for the same input: the host may call it as often as it
// likes. It refuses (`invalid-input` or `unsupported`) a desired state it cannot reach safely.

import {
  MalformedAnswer, bool, conditionToWit, endpointToWit, inProgressToWit, list, machineRefToWit,
  option, str, uint, versionFromWit, versionToWit,
} from './conv.js';

/** How a control-plane provider runs the control plane. */
export const ControlPlaneShape = Object.freeze({
  /** On machines of the cluster itself, created by the infrastructure provider. */
  Machines: 'machines',
  /** As workloads in the management cluster; the provider returns manifests. */
  Hosted: 'hosted',
  /** As a managed service behind a cloud API the provider calls. */
  Managed: 'managed',
});
export const SHAPES = Object.freeze(Object.values(ControlPlaneShape));

/**
 * @typedef {{kind: 'none'}
 *   | {kind: 'create-machine', machine: {init: boolean, version: any, failureDomain?: string}}
 *   | {kind: 'delete-machine', machine: import('./types.js').MachineRef}
 *   | {kind: 'remove-etcd-member', machine: import('./types.js').MachineRef}
 *   | {kind: 'apply-manifests', manifests: string[]}
 *   | {kind: 'wait', progress: import('./types.js').InProgress}} StepAnswer
 */

/** The single next step of a plan. */
export const Step = Object.freeze({
  /** Nothing to do: the control plane is as desired. */
  none: Object.freeze({ kind: 'none' }),
  /**
   * A machine for the host to create; `init` for the first one, which initialises the cluster.
   * @param {{init: boolean, version: any, failureDomain?: string}} machine
   * @returns {StepAnswer}
   */
  createMachine: (machine) => ({ kind: 'create-machine', machine }),
  /**
   * @param {import('./types.js').MachineRef} machine
   * @returns {StepAnswer}
   */
  deleteMachine: (machine) => ({ kind: 'delete-machine', machine }),
  /**
   * Take this member out of etcd, then delete its machine (machines shape).
   * @param {import('./types.js').MachineRef} machine
   * @returns {StepAnswer}
   */
  removeEtcdMember: (machine) => ({ kind: 'remove-etcd-member', machine }),
  /**
   * Hosted shape: manifests (YAML) for the host to apply to the management cluster.
   * @param {string[]} manifests
   * @returns {StepAnswer}
   */
  applyManifests: (manifests) => ({ kind: 'apply-manifests', manifests }),
  /**
   * Something is under way; plan again after the hint.
   * @param {import('./types.js').InProgress} progress
   * @returns {StepAnswer}
   */
  wait: (progress) => ({ kind: 'wait', progress }),
});

/** @param {any} input */
export function planInputFromWit(input) {
  return Object.freeze({
    ...input,
    version: versionFromWit(input.version),
    members: input.members.map((m) => Object.freeze({ ...m, version: versionFromWit(m.version) })),
  });
}

/**
 * @param {any} step
 * @param {string} where
 */
function stepToWit(step, where) {
  switch (step?.kind) {
    case 'none':
      return { tag: 'none' };
    case 'create-machine':
      return {
        tag: 'create-machine',
        val: {
          init: bool(step.machine?.init, `${where}.machine.init`),
          version: versionToWit(step.machine?.version, `${where}.machine.version`),
          failureDomain: option(step.machine?.failureDomain, (v) => str(v, `${where}.machine.failureDomain`)),
        },
      };
    case 'delete-machine':
    case 'remove-etcd-member':
      return { tag: step.kind, val: machineRefToWit(step.machine, `${where}.machine`) };
    case 'apply-manifests':
      return { tag: 'apply-manifests', val: list(step.manifests, `${where}.manifests`, str) };
    case 'wait':
      return { tag: 'wait', val: inProgressToWit(step.progress, `${where}.progress`) };
    default:
      throw new MalformedAnswer(where, 'must be one of Step.none, Step.createMachine(...), Step.deleteMachine(...), Step.removeEtcdMember(...), Step.applyManifests(...), Step.wait(...)');
  }
}

/**
 * The plan and the counts the host shows in the Cluster's status.
 * @typedef {object} PlanOutput
 * @property {StepAnswer} step
 * @property {{initialized: boolean, ready: boolean, version?: any,
 *   endpoint?: import('./types.js').Endpoint, conditions?: import('./types.js').Condition[]}} status
 * @property {number} replicas
 * @property {number} readyReplicas
 * @property {number} upToDateReplicas
 */

/** @param {any} output */
export function planOutputToWit(output) {
  const where = 'plan';
  if (output === null || typeof output !== 'object') {
    throw new MalformedAnswer(where, 'must answer a PlanOutput');
  }
  const status = output.status ?? {};
  return {
    step: stepToWit(output.step, `${where}.step`),
    status: {
      initialized: bool(status.initialized, `${where}.status.initialized`),
      ready: bool(status.ready, `${where}.status.ready`),
      version: option(status.version, (v) => versionToWit(v, `${where}.status.version`)),
      endpoint: option(status.endpoint, (v) => endpointToWit(v, `${where}.status.endpoint`)),
      conditions: list(status.conditions, `${where}.status.conditions`, conditionToWit),
    },
    replicas: uint(output.replicas, `${where}.replicas`),
    readyReplicas: uint(output.readyReplicas, `${where}.readyReplicas`),
    upToDateReplicas: uint(output.upToDateReplicas, `${where}.upToDateReplicas`),
  };
}
