// {{name}}: a control-plane provider written with capw's JavaScript SDK, of the machines
// shape: the host creates and deletes the control-plane machines, one step at a time, and
// `plan` says which step is safe next. Scalable, no version upgrades (set `versionUpgrades`
// and plan a rollout to add them). A machines control plane has no service to drive, so
// `reconcileControlPlane` and `deleteControlPlane` are left out and answer `unsupported`.
// `make` copies the SDK into node_modules/@capw/sdk.

import {
  ControlPlaneShape, InProgress, Step, defineProvider, fieldError,
} from '../node_modules/@capw/sdk/src/index.js';

/**
 * The provider's config, as a ClusterClass gives it, with the schema's defaults applied.
 * @typedef {object} Config
 * @property {number} maxReplicas The most control-plane machines a cluster may ask for.
 */

/** The config's JSON Schema: the host and the SDK check every config against it. */
const CONFIG_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    maxReplicas: {
      description: 'The most control-plane machines a cluster may ask for: odd, 1 to 9.',
      type: 'integer',
      minimum: 1,
      maximum: 9,
      default: 7,
    },
  },
};

/** How soon to plan again while a machine comes up or goes away, in milliseconds. */
const WAIT_MS = 5_000;

/**
 * The rule the schema does not say, at its JSON Pointer.
 * @param {Config} config
 */
function validate(config) {
  if (config.maxReplicas % 2 === 0) {
    return [fieldError('/maxReplicas', 'must be odd, so that etcd keeps a quorum')];
  }
  return [];
}

/**
 * Step.wait with a reason and a message.
 * @param {string} reason
 * @param {string} message
 */
const wait = (reason, message) => Step.wait(new InProgress(reason, message).requeueAfter(WAIT_MS));

export const provider = defineProvider({
  name: '{{name}}',
  version: '0.1.0',
  description: 'Control-plane provider: machines, one at a time, scaled up and down.',
  configSchema: CONFIG_SCHEMA,
  validate,
  controlPlane: {
    shape: ControlPlaneShape.Machines,
    scalable: true,
    versionUpgrades: false,

    /**
     * The next step and the status, from the input alone: the host may call it as often as
     * it likes.
     * @param {import('../node_modules/@capw/sdk/src/index.js').Context<Config>} ctx
     * @param {import('../node_modules/@capw/sdk/src/index.js').PlanInput} input The desired
     *   version and replicas, the members (each with its place in etcd), the failure domains
     *   and the endpoint.
     */
    plan(ctx, input) {
      const live = input.members.filter((m) => !m.deleting);
      const ready = live.filter((m) => m.ready).length;
      const wanted = Math.min(input.replicas, ctx.config.maxReplicas);

      let step = Step.none;
      const going = input.members.find((m) => m.deleting);
      if (going !== undefined) {
        // One change at a time: nothing else until the machine is gone.
        step = wait('MachineDeleting', `machine ${going.machine.name} is being deleted`);
      } else if (live.length < wanted) {
        if (ready < live.length) {
          step = wait('MachineNotReady', `${ready} of ${live.length} machines ready`);
        } else {
          const domains = input.failureDomains;
          step = Step.createMachine({
            init: live.length === 0,
            version: input.version,
            failureDomain: domains.length === 0 ? undefined : domains[live.length % domains.length],
          });
        }
      } else if (live.length > wanted) {
        // The oldest goes first (createdAt is a u64: a BigInt in a component). A member etcd
        // lists (`oldest.etcd === EtcdMembership.Member`) leaves etcd first, and the host then
        // deletes its machine: a quorum must never count a member whose machine is gone.
        // Step.removeMember answers removeEtcdMember for it, deleteMachine for any other.
        const oldest = live.reduce((a, b) => (b.createdAt < a.createdAt
          || (b.createdAt === a.createdAt && b.machine.name < a.machine.name) ? b : a));
        step = Step.removeMember(oldest);
      }

      return {
        step,
        status: {
          initialized: input.members.some((m) => m.ready),
          ready: live.length > 0 && ready === live.length,
          version: input.members.length > 0 ? input.version : undefined,
          endpoint: input.endpoint,
          conditions: [],
        },
        replicas: live.length,
        readyReplicas: ready,
        // A member whose version or machine-shaping inputs differ from what is desired now
        // says why in `outOfDate`.
        upToDateReplicas: live.filter((m) => m.outOfDate.length === 0).length,
      };
    },
  },
});
