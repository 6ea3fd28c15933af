// every-point: a stateless provider of every extension point, written with the SDK, so that one
// component exercises all of the SDK's glue under `capw plugin test` (`make conformance` in
// sdk/js). Its answers come from the call's input alone: a cluster's endpoint from its name, a
// machine's provider id from its idempotency key, a plan from the members it is shown.

import {
  BootstrapFormat, ClusterState, ControlPlaneShape, Deletion, HookResponse, InProgress, MachinePhase,
  SecretsState, Step, condition, defineProvider,
} from '../../src/index.js';

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
    clusterSecrets: (ctx) => SecretsState.ready([{ name: 'bootstrap-token', data: `token:${ctx.cluster.uid}` }]),
    generate: (ctx, request) => ({
      format: BootstrapFormat.CloudConfig,
      data: `#cloud-config\n# ${request.role} ${request.version} ${request.endpoint.host}:${request.endpoint.port}\n`,
    }),
    kubeconfig: (ctx, endpoint) => [
      'apiVersion: v1', 'kind: Config', 'clusters:', `- name: ${ctx.cluster.name}`, '  cluster:',
      `    server: https://${endpoint.host}:${endpoint.port}`, '',
    ].join('\n'),
  },
  controlPlane: {
    shape: ControlPlaneShape.Machines,
    scalable: true,
    versionUpgrades: false,
    plan(ctx, input) {
      const live = input.members.filter((m) => !m.deleting);
      const ready = live.filter((m) => m.ready).length;
      /** @type {import('../../src/control-plane.js').StepAnswer} */
      let step = Step.none;
      if (live.length < input.replicas) {
        const domains = input.failureDomains;
        step = Step.createMachine({
          init: live.length === 0,
          version: input.version,
          failureDomain: domains.length === 0 ? undefined : domains[live.length % domains.length],
        });
      } else if (live.length > input.replicas) {
        // The oldest member leaves etcd first; createdAt is a u64, a BigInt.
        const oldest = [...live].sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0))[0];
        step = Step.removeEtcdMember(oldest.machine);
      }
      return {
        step,
        status: {
          initialized: live.length > 0,
          ready: ready > 0,
          version: live.length > 0 ? input.version : undefined,
          endpoint: input.endpoint,
          conditions: [condition('Planned', true, 'StepChosen')],
        },
        replicas: live.length,
        readyReplicas: ready,
        upToDateReplicas: live.length,
      };
    },
  },
  lifecycleHooks: {
    handle: (ctx, request) => (request.fromVersion === undefined
      ? HookResponse.proceed
      : HookResponse.hold(new InProgress('UpgradeChecked', `${request.fromVersion} to ${request.toVersion}`).requeueAfter(1000))),
  },
});
