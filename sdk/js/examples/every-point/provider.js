// every-point: a stateless provider of every extension point, written with the SDK, so that one
// component exercises all of the SDK's glue under `capw plugin test` (`make conformance` in
// sdk/js). Its answers come from the call's input alone: a cluster's endpoint from its name, a
// machine's provider id from its idempotency key, a plan from the members it is shown, the join
// token from the cluster's secrets.

import {
  BootstrapFormat, ClusterState, ControlPlaneShape, Deletion, ErrorCode, HookResponse, InProgress, MachinePhase,
  ProviderError, SecretsState, Step, condition, defineProvider,
} from '../../src/index.js';

/** The item of the cluster's secrets that holds the join token, as `<id>.<secret>`. */
export const TOKEN_ITEM = 'bootstrap-token';
/** How long the workload cluster accepts a join token: a day, as `kubeadm init` makes them. */
const TOKEN_TTL_SECONDS = 24 * 3600;
/** The group kubeadm's RBAC lets post node certificate requests. */
const TOKEN_GROUPS = ['system:bootstrappers:kubeadm:default-node-token'];

/**
 * `n` random characters of `[a-z0-9]`, a bootstrap token's alphabet.
 * @param {number} n
 */
function randomPart(n) {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  // 252 is the largest multiple of 36 below 256: bytes above it are drawn again, so that every
  // character is as likely.
  let out = '';
  while (out.length < n) {
    for (const byte of crypto.getRandomValues(new Uint8Array(n))) {
      if (byte < 252 && out.length < n) {
        out += alphabet[byte % 36];
      }
    }
  }
  return out;
}

/**
 * The join token in the cluster's secrets.
 * @param {{name: string, data: Uint8Array}[]} secrets
 * @returns {import('../../src/index.js').JoinToken}
 */
function storedToken(secrets) {
  const item = secrets.find((s) => s.name === TOKEN_ITEM);
  const parts = item === undefined ? undefined : /^([a-z0-9]{6})\.([a-z0-9]{16})$/.exec(new TextDecoder().decode(item.data));
  if (parts === null || parts === undefined) {
    throw ProviderError.permanent(ErrorCode.InvalidInput, `secrets: no ${TOKEN_ITEM} of the form <id>.<secret>`);
  }
  return { item: TOKEN_ITEM, id: parts[1], secret: parts[2], ttlSeconds: TOKEN_TTL_SECONDS, extraGroups: TOKEN_GROUPS };
}

/** A fresh join token, in the item `storedToken` reads. */
const freshToken = () => ({ item: TOKEN_ITEM, id: randomPart(6), secret: randomPart(16), ttlSeconds: TOKEN_TTL_SECONDS, extraGroups: TOKEN_GROUPS });

export const provider = defineProvider({
  name: 'js-every-point',
  version: '0.1.0',
  description: 'Every extension point, stateless, through the JavaScript SDK.',
  configSchema: {
    type: 'object',
    additionalProperties: false,
    properties: { domain: { type: 'string', pattern: '^[a-z0-9.-]+$', default: 'example.test' } },
  },
  infrastructure: {
    reconcileCluster: (ctx) => ClusterState.ready({
      controlPlaneEndpoint: { host: `${ctx.cluster.name}.${ctx.config.domain}`, port: 6443 },
      failureDomains: [{ name: 'zone-a', controlPlane: true }],
    }),
    deleteCluster: () => Deletion.deleted,
    reconcileMachine: (ctx, spec) => ({
      phase: MachinePhase.Running,
      providerId: `static://${ctx.idempotencyKey}`,
      failureDomain: spec.failureDomain,
      addresses: [{ kind: 'hostname', address: spec.machine.name }],
    }),
    deleteMachine: () => Deletion.deleted,
    // Nothing is kept anywhere, so nothing is ever listed.
    listMachines: () => [],
  },
  bootstrap: {
    clusterSecrets: () => {
      const token = freshToken();
      return SecretsState.ready([{ name: TOKEN_ITEM, data: `${token.id}.${token.secret}` }]);
    },
    // A worker of a control plane a service runs joins with what the service handed out
    // (`request.join`); the machines shape's joins carry the token of the cluster's secrets.
    // Only the token's public id goes into the comment: the data is secret, and so is this.
    generate: (ctx, request) => {
      const via = request.join === undefined
        ? `token ${storedToken(request.secrets).id}`
        : `the service's CA, token ${request.join.token?.id ?? 'none'}`;
      return {
        format: BootstrapFormat.CloudConfig,
        data: `#cloud-config\n# ${request.role} ${request.version} ${request.endpoint.host}:${request.endpoint.port} via ${via}\n`,
      };
    },
    kubeconfig: (ctx, endpoint) => [
      'apiVersion: v1', 'kind: Config', 'clusters:', `- name: ${ctx.cluster.name}`, '  cluster:',
      `    server: https://${endpoint.host}:${endpoint.port}`, '',
    ].join('\n'),
    // The host keeps this token valid in the workload cluster, and asks for a new one when it
    // is missing there or past half its life; it stores the new one in the same item.
    currentJoinToken: (ctx, secrets) => storedToken(secrets),
    renewJoinToken: () => freshToken(),
  },
  // reconcileControlPlane and deleteControlPlane are left out: a machines control plane has no
  // service to drive, and both answer unsupported.
  controlPlane: {
    shape: ControlPlaneShape.Machines,
    scalable: true,
    versionUpgrades: false,
    plan(ctx, input) {
      const live = input.members.filter((m) => !m.deleting);
      const ready = live.filter((m) => m.ready).length;
      // Stacked etcd keeps a quorum with F of 2F+1 members failed.
      const wanted = input.failuresTolerated === undefined ? input.replicas : 2 * input.failuresTolerated + 1;
      /** @type {import('../../src/control-plane.js').StepAnswer} */
      let step = Step.none;
      if (live.length < wanted) {
        const domains = input.failureDomains;
        step = Step.createMachine({
          init: live.length === 0,
          version: input.version,
          failureDomain: domains.length === 0 ? undefined : domains[live.length % domains.length],
        });
      } else if (live.length > wanted) {
        // The oldest member goes first, out of etcd first when etcd lists it; createdAt is a
        // u64, a BigInt.
        const oldest = [...live].sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0))[0];
        step = Step.removeMember(oldest);
      }
      return {
        step,
        status: {
          initialized: live.length > 0,
          ready: ready > 0,
          version: live.length > 0 ? input.version : undefined,
          endpoint: input.endpoint,
          conditions: [condition('Planned', true, 'StepChosen')],
          failuresTolerated: live.length > 0 ? Math.floor((live.length - 1) / 2) : undefined,
        },
        replicas: live.length,
        readyReplicas: ready,
        upToDateReplicas: live.filter((m) => m.outOfDate.length === 0).length,
      };
    },
  },
  lifecycleHooks: {
    handle: (ctx, request) => (request.fromVersion === undefined
      ? HookResponse.proceed
      : HookResponse.hold(new InProgress('UpgradeChecked', `${request.fromVersion} to ${request.toVersion}`).requeueAfter(1000))),
  },
});
