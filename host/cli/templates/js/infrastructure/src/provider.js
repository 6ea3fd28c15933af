// {{name}}: an infrastructure provider written with capw's JavaScript SDK. It is stateless:
// every machine "exists" where the call says, with a provider id made from the call's
// idempotency key, and the control-plane endpoint is a name under the configured domain. A
// real provider calls its cloud's API (the SDK's `request`, over the HTTP hosts the operator
// grants) and keeps nothing in the sandbox either: the cloud holds the state.
// `make` copies the SDK into node_modules/@capw/sdk.

import {
  ClusterState, Deletion, MachinePhase, defineProvider, fieldError, jsonPointer,
} from '../node_modules/@capw/sdk/src/index.js';

/**
 * The provider's config, as a ClusterClass gives it, with the schema's defaults applied.
 * @typedef {object} Config
 * @property {string} domain The DNS domain the control-plane endpoint is named under.
 * @property {string[]} failureDomains The failure domains machines are spread over.
 */

/** The config's JSON Schema: the host and the SDK check every config against it. */
const CONFIG_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    domain: {
      description: 'The DNS domain the control-plane endpoint is named under.',
      type: 'string',
      pattern: '^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$',
      default: 'example.test',
    },
    failureDomains: {
      description: 'The failure domains machines are spread over.',
      type: 'array',
      items: { type: 'string' },
      minItems: 1,
      default: ['zone-a'],
    },
  },
};

/** A DNS label: 1-63 of a-z, 0-9 and '-', neither first nor last. */
const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * A DNS name: labels joined by dots.
 * @param {string} name
 */
function isDnsName(name) {
  return name.length <= 253 && name.split('.').every((label) => LABEL.test(label));
}

/**
 * The rules the schema does not say, each problem at its JSON Pointer.
 * @param {Config} config
 */
function validate(config) {
  const errors = [];
  if (!isDnsName(config.domain)) {
    errors.push(fieldError('/domain', 'must be a DNS name such as example.test'));
  }
  config.failureDomains.forEach((name, index) => {
    if (!LABEL.test(name)) {
      errors.push(fieldError(jsonPointer('failureDomains', index), 'must be a DNS label such as zone-a'));
    }
  });
  return errors;
}

export const provider = defineProvider({
  name: '{{name}}',
  version: '0.1.0',
  description: 'Infrastructure provider: stateless machines named by their idempotency key.',
  configSchema: CONFIG_SCHEMA,
  validate,
  infrastructure: {
    /**
     * The endpoint is this infrastructure's to make for a control plane on machines; one a
     * service runs reports its own, and an infrastructure made for it leaves the endpoint out.
     * @param {import('../node_modules/@capw/sdk/src/index.js').Context<Config>} ctx
     */
    reconcileCluster: (ctx) => ClusterState.ready({
      controlPlaneEndpoint: { host: `${ctx.cluster.name}.${ctx.config.domain}`, port: 6443 },
      failureDomains: ctx.config.failureDomains.map((name) => ({ name, controlPlane: true })),
    }),

    deleteCluster: () => Deletion.deleted,

    reconcileMachine: (ctx, spec) => ({
      phase: MachinePhase.Running,
      // The same key on every call for one machine: the same machine, never a second.
      providerId: `static://${ctx.idempotencyKey}`,
      failureDomain: spec.failureDomain,
      addresses: [{ kind: 'hostname', address: spec.machine.name }],
    }),

    deleteMachine: () => Deletion.deleted,

    // Nothing is kept anywhere, so nothing is listed. A real provider lists every machine its
    // cloud holds for the cluster, so that the host deletes those it has no Machine for (see
    // plugins/other-languages/go-sim-infra in the capw repository).
    listMachines: () => [],
  },
});
