// {{name}}: a lifecycle-hooks provider written with capw's JavaScript SDK: deletion protection.
// Every transition proceeds, except a cluster's deletion while the ClusterClass's config says
// `protectFromDelete: true`; the host holds only that cluster's deletion and asks again.
// `make` copies the SDK into node_modules/@capw/sdk.

import { Hook, HookResponse, InProgress, defineProvider } from '../node_modules/@capw/sdk/src/index.js';

/**
 * The provider's config, as a ClusterClass gives it, with the schema's defaults applied.
 * @typedef {object} Config
 * @property {boolean} protectFromDelete Hold every deletion of the class's clusters.
 */

/** The config's JSON Schema: the host and the SDK check every config against it. */
const CONFIG_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    protectFromDelete: {
      description: "Hold every deletion of the class's clusters.",
      type: 'boolean',
      default: false,
    },
  },
};

/** How soon the host asks again about a held deletion, in milliseconds. */
const RECHECK_MS = 60_000;

export const provider = defineProvider({
  name: '{{name}}',
  version: '0.1.0',
  description: 'Lifecycle hooks: holds the deletion of protected clusters.',
  configSchema: CONFIG_SCHEMA,
  lifecycleHooks: {
    /**
     * Called at each hook point until it answers proceed; idempotent.
     * @param {import('../node_modules/@capw/sdk/src/index.js').Context<Config>} ctx
     * @param {import('../node_modules/@capw/sdk/src/index.js').HookRequest} request
     */
    handle(ctx, request) {
      if (request.hook === Hook.BeforeClusterDelete && ctx.config.protectFromDelete) {
        return HookResponse.hold(new InProgress(
          'DeletionProtected',
          'set protectFromDelete to false in the ClusterClass to delete this cluster',
        ).requeueAfter(RECHECK_MS));
      }
      return HookResponse.proceed;
    },
  },
});
