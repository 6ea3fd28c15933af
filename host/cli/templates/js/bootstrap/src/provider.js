// {{name}}: a bootstrap provider written with capw's JavaScript SDK: cloud-config for each
// machine from a typed config. Its join data carries no bootstrap token for the host to keep
// valid, so `currentJoinToken` is left out (it answers none) and so is `renewJoinToken`.
// `make` copies the SDK into node_modules/@capw/sdk.

import {
  BootstrapFormat, ErrorCode, ProviderError, SecretsState, defineProvider, fieldError, jsonPointer,
} from '../node_modules/@capw/sdk/src/index.js';

/**
 * The provider's config, as a ClusterClass gives it, with the schema's defaults applied.
 * @typedef {object} Config
 * @property {string} timezone IANA time zone of the machines, e.g. Europe/Berlin.
 * @property {string[]} packages Debian packages to install on every machine.
 */

/** The config's JSON Schema: the host and the SDK check every config against it. */
const CONFIG_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    timezone: { description: 'IANA time zone of the machines, e.g. Europe/Berlin.', type: 'string', default: 'UTC' },
    packages: { description: 'Debian packages to install on every machine.', type: 'array', items: { type: 'string' }, default: [] },
  },
};

/** Name of the one secret item `clusterSecrets` makes. */
export const TOKEN = 'bootstrap-token';

/**
 * The rules the schema does not say, each problem at its JSON Pointer.
 * @param {Config} config
 */
function validate(config) {
  const errors = [];
  if (!/^[A-Za-z0-9_+\-/]{1,64}$/.test(config.timezone)) {
    errors.push(fieldError('/timezone', 'must be a time zone name such as Europe/Berlin'));
  }
  config.packages.forEach((name, index) => {
    if (!/^[a-z0-9][a-z0-9+.-]*$/.test(name)) {
      errors.push(fieldError(jsonPointer('packages', index), 'must be a Debian package name'));
    }
  });
  return errors;
}

export const provider = defineProvider({
  name: '{{name}}',
  version: '0.1.0',
  description: 'Bootstrap provider: cloud-config from a typed config.',
  configSchema: CONFIG_SCHEMA,
  validate,
  bootstrap: {
    /** One token per cluster, from its uid: the same on every call. */
    clusterSecrets: (ctx) => SecretsState.ready([{ name: TOKEN, data: `token:${ctx.cluster.uid}` }]),

    /**
     * @param {import('../node_modules/@capw/sdk/src/index.js').Context<Config>} ctx
     * @param {import('../node_modules/@capw/sdk/src/index.js').BootstrapRequest} request The
     *   machine, its role, version, endpoint, the cluster's secrets, the control-plane members
     *   and, for a worker of a control plane a service runs, its join credentials.
     */
    generate(ctx, request) {
      // A worker of a control plane a service runs (the hosted and managed shapes) joins with
      // what the service handed out, `request.join`: its CA and token. Its `secrets` are empty.
      if (request.join === undefined && !request.secrets.some((s) => s.name === TOKEN)) {
        throw ProviderError.permanent(ErrorCode.InvalidInput, `request.secrets: no ${TOKEN}`);
      }
      const { timezone, packages } = ctx.config;
      const members = request.controlPlaneMembers.map((m) => m.name).join(',');
      let data = '#cloud-config\n'
        + `# role: ${request.role}\n` // init, join-control-plane or worker
        + `# version: ${request.version}\n` // v1.35.0
        + `# endpoint: ${request.endpoint.host}:${request.endpoint.port}\n`
        + `# members: ${members}\n`;
      if (request.join !== undefined) {
        // The token's id is public; its secret never goes into a comment or a log.
        data += `# joins: the service's control plane, token ${request.join.token?.id ?? 'none'}\n`;
      }
      data += `timezone: ${timezone}\n`;
      data += packages.length === 0 ? 'packages: []\n' : `packages:\n${packages.map((p) => `- ${p}\n`).join('')}`;
      return { format: BootstrapFormat.CloudConfig, data };
    },

    /** An admin kubeconfig for the cluster's endpoint (an IPv6 host in brackets). */
    kubeconfig(ctx, endpoint) {
      const name = ctx.cluster.name;
      const host = endpoint.host.includes(':') ? `[${endpoint.host}]` : endpoint.host;
      const user = `${name}-admin`;
      const context = `${user}@${name}`;
      return [
        'apiVersion: v1',
        'kind: Config',
        'clusters:',
        `- name: ${name}`,
        '  cluster:',
        `    server: https://${host}:${endpoint.port}`,
        'users:',
        `- name: ${user}`,
        '  user: {}',
        'contexts:',
        `- name: ${context}`,
        '  context:',
        `    cluster: ${name}`,
        `    user: ${user}`,
        `current-context: ${context}`,
        '',
      ].join('\n');
    },
  },
});
