// The `control-plane` extension point: the next safe step toward the desired control plane.
//
// A provider serves it with an object (or class instance) that declares its shape and
// capabilities beside its methods:
//
//     controlPlane: {
//       shape: ControlPlaneShape.Machines,  // required: machines, hosted or managed
//       scalable: true,                     // the replica count can change after creation
//       versionUpgrades: true,              // the version can be upgraded in place
//       chainsUpgrades: false,              // more than one minor in one step of the spec (0.3)
//       plan(ctx, input) { return {step: Step.none, status: {...}, replicas, ...}; },
//       reconcileControlPlane(ctx, input) { return {plan: {...}, access}; },  // managed (0.3)
//       deleteControlPlane(ctx) { return Deletion.deleted; },                  // managed (0.3)
//     }
//
// `plan` is pure and deterministic for the same input: the host may call it as often as it
// likes. It refuses (`invalid-input` or `unsupported`) a desired state it cannot reach safely.
//
// The machines shape answers create and delete steps, and `Step.removeEtcdMember` for a member
// etcd still lists (`member.etcd === EtcdMembership.Member`): `Step.removeMember(member)` picks
// the right one. The hosted shape answers `Step.applyManifests` with every object the control
// plane consists of, on every plan, beside the `certificates` the host mints and, on a shared
// etcd, the `sharedDatastore`; the host tells it what it applied in `input.objects`. The
// managed shape drives its service from `reconcileControlPlane`, which answers `none` or
// `wait` with the access to the control plane once it has one, and `deleteControlPlane`;
// `plan` answers, for it, what a reconcile would do without doing it. Both methods answer
// `unsupported` when left out, which is right for the machines and hosted shapes.

import {
  MalformedAnswer, bool, conditionToWit, endpointToWit, inProgressToWit, joinTokenToWit, list,
  machineRefToWit, oneOf, option, str, uint, versionFromWit, versionToWit,
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

/** A member's place in the cluster's etcd, as the host observed it in this pass (0.3). */
export const EtcdMembership = Object.freeze({
  /**
   * The host does not observe etcd for this cluster: plan as a 0.2 provider would; the host
   * still takes a member out of etcd before it deletes its machine wherever it can see etcd.
   */
  Unknown: 'unknown',
  /** etcd lists a member on this machine: it leaves through `Step.removeEtcdMember`. */
  Member: 'member',
  /** etcd lists no member on this machine: it has not joined yet, or it has left. */
  NotMember: 'not-member',
});

/** The authority a certificate the host mints for a hosted control plane chains to (0.3). */
export const CertificateAuthority = Object.freeze({
  /** The cluster CA: API servers, kubelets' clients, admins. */
  Cluster: 'cluster',
  /** The front-proxy CA: the API server's aggregation client. */
  FrontProxy: 'front-proxy',
  /** The etcd CA: etcd's serving and peer certificates, its clients. */
  Etcd: 'etcd',
});
const AUTHORITIES = Object.values(CertificateAuthority);

/** What a minted certificate is for (0.3). */
export const CertificateUsage = Object.freeze({
  /** TLS server authentication (its SANs are the names it serves). */
  Server: 'server',
  /** TLS client authentication (its common name and organizations are who it is). */
  Client: 'client',
  /** Both: an etcd peer. */
  Peer: 'peer',
});
const USAGES = Object.values(CertificateUsage);

/** Material of the cluster's CAs the host writes into a Secret it mints (0.3). */
export const SecretMaterial = Object.freeze({
  /** `ca.crt`: the cluster CA's certificate. */
  ClusterCaCertificate: 'cluster-ca-certificate',
  /**
   * `ca.crt` and `ca.key`: the cluster CA with its key, for kube-controller-manager's signer.
   * The key goes to the management cluster's Secret, never to a sandbox.
   */
  ClusterCa: 'cluster-ca',
  /** `front-proxy-ca.crt`. */
  FrontProxyCaCertificate: 'front-proxy-ca-certificate',
  /** `etcd-ca.crt`. */
  EtcdCaCertificate: 'etcd-ca-certificate',
  /** `sa.key` and `sa.pub`: the key pair service-account tokens are signed with. */
  ServiceAccountKeys: 'service-account-keys',
});
const MATERIALS = Object.values(SecretMaterial);

/**
 * An existing control-plane member as the host observes it.
 * @typedef {object} Member
 * @property {import('./types.js').MachineRef} machine
 * @property {import('./types.js').KubernetesVersion} version
 * @property {string | undefined} failureDomain
 * @property {boolean} ready Its Node is Ready (the machine's running phase where the host does
 *   not reach the workload cluster).
 * @property {bigint} createdAt Seconds since the Unix epoch (a `u64`: a `BigInt` in a
 *   component); orders members oldest first.
 * @property {boolean} deleting Being deleted already.
 * @property {'unknown' | 'member' | 'not-member'} etcd Its place in etcd (0.3):
 *   {@link EtcdMembership}.
 * @property {readonly string[]} outOfDate Why it is out of date, one entry per input that
 *   differs from what is desired now (`version`, `infrastructure.config/instanceType`,
 *   `bootstrap.provider`, `failureDomain`); empty when up to date (0.3).
 * @property {readonly string[]} unhealthy Why the host's health checks judge it unhealthy and
 *   it may be replaced now; empty when healthy, not judged, or not to be replaced now. Replace
 *   it when etcd keeps its quorum without it: take it out, then create its replacement;
 *   otherwise wait saying why (0.3).
 */

/**
 * An object the host applied to the management cluster for a hosted control plane, as it
 * stands now (0.3).
 * @typedef {object} HostedObject
 * @property {string} apiVersion `apps/v1` or `v1`.
 * @property {string} kind `Deployment`, `StatefulSet`, `Service`, `Secret` or `ConfigMap`.
 * @property {string} name
 * @property {boolean} ready A workload: rolled out and available; a LoadBalancer Service: it
 *   has an address; anything else: it exists.
 * @property {string | undefined} message Why it is not ready, when the host can say.
 * @property {readonly string[]} images A Deployment or StatefulSet: its Pod template's images
 *   (init containers first), as applied; empty for other kinds.
 * @property {readonly string[]} addresses A LoadBalancer Service: its load balancer's
 *   addresses; empty otherwise.
 */

/**
 * The desired control plane and what exists: `plan`'s and `reconcileControlPlane`'s input.
 * @typedef {object} PlanInput
 * @property {import('./types.js').KubernetesVersion} version
 * @property {number} replicas The members the Cluster asks for; 0 when it asks none or asks
 *   `failuresTolerated` instead.
 * @property {readonly Member[]} members
 * @property {readonly string[]} failureDomains Failure domains that may hold control-plane
 *   machines.
 * @property {import('./types.js').Endpoint | undefined} endpoint From the infrastructure, when
 *   known.
 * @property {number | undefined} failuresTolerated The Cluster's ask in capabilities rather
 *   than counts: keep serving with this many members failed (for stacked etcd, 2N+1 members);
 *   refuse it with `invalid-input` naming the field where it cannot be met (0.3).
 * @property {readonly HostedObject[]} objects Hosted shape: every object the host applied for
 *   this control plane, with its readiness; empty for other shapes (0.3).
 */

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
   * Takes `member` out of the control plane: `removeEtcdMember` when etcd lists it (the host
   * then deletes its machine), `deleteMachine` otherwise (0.3's rule: never delete the machine
   * of a member etcd lists).
   * @param {{machine: import('./types.js').MachineRef, etcd?: string}} member
   * @returns {StepAnswer}
   */
  removeMember: (member) => (member.etcd === EtcdMembership.Member
    ? { kind: 'remove-etcd-member', machine: member.machine }
    : { kind: 'delete-machine', machine: member.machine }),
  /**
   * Hosted shape: every object (YAML, one each) the control plane consists of now, for the
   * host to apply to the management cluster; answered on every plan while it exists.
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

/**
 * A list of the input, frozen; a field a 0.2-shaped input leaves out is empty.
 * @template T
 * @param {T[] | undefined} items
 * @param {(item: any) => T} [convert]
 * @returns {readonly T[]}
 */
const frozenList = (items, convert = (item) => item) => Object.freeze((items ?? []).map(convert));

/**
 * @param {any} m
 * @returns {Member}
 */
function memberFromWit(m) {
  return Object.freeze({
    ...m,
    version: versionFromWit(m.version),
    etcd: m.etcd ?? EtcdMembership.Unknown,
    outOfDate: frozenList(m.outOfDate),
    unhealthy: frozenList(m.unhealthy),
  });
}

/**
 * @param {any} o
 * @returns {HostedObject}
 */
function hostedObjectFromWit(o) {
  return Object.freeze({ ...o, images: frozenList(o.images), addresses: frozenList(o.addresses) });
}

/**
 * @param {any} input
 * @returns {PlanInput}
 */
export function planInputFromWit(input) {
  return Object.freeze({
    ...input,
    version: versionFromWit(input.version),
    members: frozenList(input.members, memberFromWit),
    failureDomains: frozenList(input.failureDomains),
    objects: frozenList(input.objects, hostedObjectFromWit),
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
 * One certificate (and its key) the host mints into a Secret (0.3).
 * @typedef {object} CertificateRequest
 * @property {string} key The Secret's data keys: `<key>.crt` and `<key>.key` (and `<key>.conf`
 *   with `kubeconfigServer`). A DNS label.
 * @property {'cluster' | 'front-proxy' | 'etcd'} authority {@link CertificateAuthority}
 * @property {'server' | 'client' | 'peer'} usage {@link CertificateUsage}
 * @property {string} commonName
 * @property {string[]} [organizations]
 * @property {string[]} [sans] DNS names and IP addresses, for `server` and `peer`.
 * @property {string} [kubeconfigServer] When given, the host also writes `<key>.conf`: a
 *   kubeconfig for this server URL that authenticates with this client certificate.
 */

/**
 * A Secret the host mints from the cluster's CAs for a hosted control plane; the CA keys never
 * enter the sandbox (0.3).
 * @typedef {object} CertificateSecret
 * @property {string} name The Cluster's name and a dash first, as for every object of a hosted
 *   plan.
 * @property {CertificateRequest[]} [certificates]
 * @property {string[]} [materials] {@link SecretMaterial}s.
 */

/**
 * A hosted control plane's place in an etcd shared by several control planes (Kamaji's way);
 * the host makes the cluster's user, role and key prefix and writes what the API servers need
 * into the Secret `secret` (0.3).
 * @typedef {object} SharedDatastore
 * @property {string} name The datastore: a Secret of type `capw.dev/datastore` in the host's
 *   provider namespace.
 * @property {string} secret The Secret the host writes: one of the plan's objects (the
 *   Cluster's name and a dash first).
 */

/**
 * The control plane as the host shows it in the Cluster's status.
 * @typedef {object} ControlPlaneStatus
 * @property {boolean} initialized
 * @property {boolean} ready
 * @property {any} [version] A `KubernetesVersion`, its text or the record.
 * @property {import('./types.js').Endpoint} [endpoint]
 * @property {import('./types.js').Condition[]} [conditions]
 * @property {number} [failuresTolerated] How many members may fail with the control plane
 *   still serving, as it runs now, when known (0.3).
 */

/**
 * The plan and the counts the host shows in the Cluster's status.
 * @typedef {object} PlanOutput
 * @property {StepAnswer} step
 * @property {ControlPlaneStatus} status
 * @property {number} replicas
 * @property {number} readyReplicas
 * @property {number} upToDateReplicas Members with nothing out of date (`outOfDate` empty).
 * @property {CertificateSecret[]} [certificates] Hosted shape, beside `applyManifests`: the
 *   Secrets the host mints (0.3).
 * @property {SharedDatastore} [sharedDatastore] Hosted shape: the shared etcd it keeps its
 *   state in (0.3).
 */

/**
 * How a control plane a service runs is reached and joined (0.3).
 * @typedef {object} ControlPlaneAccess
 * @property {import('./types.js').Endpoint} endpoint Where its API server is reached.
 * @property {string} caCertificate The CA its API server's certificate chains to (PEM).
 * @property {string} adminKubeconfig An admin kubeconfig (YAML). Secret: never log it.
 * @property {import('./types.js').JoinToken} [joinToken] The token workers join with, issued
 *   and kept valid by the service; left out when joins need none.
 */

/**
 * The answer of `reconcileControlPlane` (0.3).
 * @typedef {object} ReconcileOutput
 * @property {PlanOutput} plan Its step is `Step.none` once the control plane is as desired and
 *   `Step.wait(...)` while the service works toward it.
 * @property {ControlPlaneAccess} [access] How to reach and join it, once it can be.
 */

/**
 * @param {any} request
 * @param {string} where
 */
function certificateRequestToWit(request, where) {
  return {
    key: str(request?.key, `${where}.key`),
    authority: oneOf(request?.authority, `${where}.authority`, AUTHORITIES),
    usage: oneOf(request?.usage, `${where}.usage`, USAGES),
    commonName: str(request?.commonName, `${where}.commonName`),
    organizations: list(request?.organizations, `${where}.organizations`, str),
    sans: list(request?.sans, `${where}.sans`, str),
    kubeconfigServer: option(request?.kubeconfigServer, (v) => str(v, `${where}.kubeconfigServer`)),
  };
}

/**
 * @param {any} secret
 * @param {string} where
 */
function certificateSecretToWit(secret, where) {
  return {
    name: str(secret?.name, `${where}.name`),
    certificates: list(secret?.certificates, `${where}.certificates`, certificateRequestToWit),
    materials: list(secret?.materials, `${where}.materials`, (m, w) => oneOf(m, w, MATERIALS)),
  };
}

/**
 * @param {any} output
 * @param {string} [where]
 */
export function planOutputToWit(output, where = 'plan') {
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
      failuresTolerated: option(status.failuresTolerated, (v) => uint(v, `${where}.status.failuresTolerated`)),
    },
    replicas: uint(output.replicas, `${where}.replicas`),
    readyReplicas: uint(output.readyReplicas, `${where}.readyReplicas`),
    upToDateReplicas: uint(output.upToDateReplicas, `${where}.upToDateReplicas`),
    certificates: list(output.certificates, `${where}.certificates`, certificateSecretToWit),
    sharedDatastore: option(output.sharedDatastore, (d) => ({
      name: str(d?.name, `${where}.sharedDatastore.name`),
      secret: str(d?.secret, `${where}.sharedDatastore.secret`),
    })),
  };
}

/**
 * @param {any} access
 * @param {string} where
 */
function accessToWit(access, where) {
  return {
    endpoint: endpointToWit(access?.endpoint, `${where}.endpoint`),
    caCertificate: str(access?.caCertificate, `${where}.caCertificate`),
    adminKubeconfig: str(access?.adminKubeconfig, `${where}.adminKubeconfig`),
    joinToken: option(access?.joinToken, (t) => joinTokenToWit(t, `${where}.joinToken`)),
  };
}

/** @param {any} output */
export function reconcileOutputToWit(output) {
  const where = 'reconcileControlPlane';
  if (output === null || typeof output !== 'object') {
    throw new MalformedAnswer(where, 'must answer a ReconcileOutput {plan, access}');
  }
  const plan = planOutputToWit(output.plan, `${where}.plan`);
  if (plan.step.tag !== 'none' && plan.step.tag !== 'wait') {
    throw new MalformedAnswer(`${where}.plan.step`, `must be Step.none or Step.wait(...), got ${plan.step.tag}`);
  }
  return { plan, access: option(output.access, (a) => accessToWit(a, `${where}.access`)) };
}
