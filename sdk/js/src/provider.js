// Who a provider is, and the extension points it serves: `defineProvider`.

import { ConfigSchema } from './config.js';
import { SHAPES } from './control-plane.js';

/**
 * The extension points, by the contract's names, in its order.
 * @typedef {'infrastructure' | 'bootstrap' | 'control-plane' | 'lifecycle-hooks'} ExtensionPoint
 */

/** Each extension point: the contract's name and the definition's field that serves it. */
export const POINTS = Object.freeze([
  Object.freeze({ point: 'infrastructure', field: 'infrastructure' }),
  Object.freeze({ point: 'bootstrap', field: 'bootstrap' }),
  Object.freeze({ point: 'control-plane', field: 'controlPlane' }),
  Object.freeze({ point: 'lifecycle-hooks', field: 'lifecycleHooks' }),
]);

/** A config schema for a provider that takes no config: the empty object only. */
export const NO_CONFIG = Object.freeze({ type: 'object', additionalProperties: false });

/**
 * What a provider is: `describe`'s fields, its config and the extension points it serves.
 *
 * @template C The config type, as the schema describes it.
 * @typedef {object} ProviderDefinition
 * @property {string} name Short and lowercase, e.g. `js-hooks`.
 * @property {string} version The provider's own semantic version, e.g. `0.1.0`.
 * @property {string} description One line for humans.
 * @property {object | boolean | string} [configSchema] JSON Schema (draft 2020-12, within the
 *   SDK's subset: README.md, "Config") of the config. The host checks every config against it;
 *   every call gets the config with its defaults applied. Without one, the config is `{}`.
 * @property {(config: C) => (import('./config.js').FieldError[] | undefined | void)} [validate]
 *   The rules the schema cannot say (a value's format, uniqueness across a list, combinations
 *   of fields), run by validate-config on a config that passed the schema. Pure and
 *   deterministic; reports every problem at its JSON Pointer, not just the first.
 * @property {{httpHosts?: string[], secrets?: string[]}} [requestedGrants] What the provider
 *   asks the operator to grant. The operator decides; the host enforces the grants, never
 *   this list.
 * @property {object} [infrastructure] Serves `infrastructure` (infrastructure.js).
 * @property {object} [bootstrap] Serves `bootstrap` (bootstrap.js).
 * @property {{shape: string, scalable?: boolean, versionUpgrades?: boolean, chainsUpgrades?: boolean, [method: string]: unknown}} [controlPlane]
 *   Serves `control-plane` (control-plane.js): its shape and capabilities beside its methods.
 * @property {object} [lifecycleHooks] Serves `lifecycle-hooks` (lifecycle-hooks.js).
 */

/**
 * A provider, checked: what `exportProvider` exports and `testing` tests.
 * @template C
 * @typedef {object} Provider
 * @property {string} name
 * @property {string} version
 * @property {string} description
 * @property {ConfigSchema} schema
 * @property {ProviderDefinition<C>['validate']} validate
 * @property {{httpHosts: readonly string[], secrets: readonly string[]}} requestedGrants
 * @property {readonly ExtensionPoint[]} extensionPoints The points it serves, in the contract's order.
 * @property {Readonly<Partial<Record<ExtensionPoint, object>>>} points The object serving each
 *   point it serves.
 */

const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/u;

/** A provider definition that the host would refuse, or the SDK cannot serve. */
export class DefinitionError extends TypeError {
  /** @param {string} problem */
  constructor(problem) {
    super(`provider definition: ${problem}`);
    this.name = 'DefinitionError';
  }
}

/**
 * Checks a provider's definition and makes it the provider `exportProvider` exports.
 *
 * Providers are stateless: the host calls each function in a fresh instance, so nothing kept
 * between calls survives. The definition runs once, when the component is built (componentize-js
 * snapshots the initialised module), so a definition the host would refuse fails the build.
 *
 * @template C
 * @param {ProviderDefinition<C>} definition
 * @returns {Provider<C>}
 * @throws {DefinitionError | import('./config.js').SchemaError}
 */
export function defineProvider(definition) {
  const { name, version, description } = definition;
  // The host's rule: 1 to 63 characters of a-z, 0-9 and '-'.
  if (typeof name !== 'string' || !/^[a-z0-9-]{1,63}$/u.test(name)) {
    throw new DefinitionError(`name must be short and lowercase (1-63 of a-z, 0-9, -), got ${JSON.stringify(name)}`);
  }
  if (typeof version !== 'string' || !SEMVER.test(version)) {
    throw new DefinitionError(`version must be a semantic version, got ${JSON.stringify(version)}`);
  }
  if (typeof description !== 'string' || description.trim() === '' || /[\r\n]/u.test(description)) {
    throw new DefinitionError('description must be one line, not empty');
  }
  if (definition.validate !== undefined && typeof definition.validate !== 'function') {
    throw new DefinitionError('validate must be a function');
  }
  const grants = definition.requestedGrants ?? {};
  const requestedGrants = Object.freeze({
    httpHosts: Object.freeze([...(grants.httpHosts ?? [])]),
    secrets: Object.freeze([...(grants.secrets ?? [])]),
  });
  if (requestedGrants.secrets.some((s) => typeof s !== 'string' || s === '')) {
    throw new DefinitionError('requestedGrants.secrets must be names, none empty');
  }
  /** @type {Partial<Record<ExtensionPoint, object>>} */
  const points = {};
  for (const { point, field } of POINTS) {
    const impl = definition[field];
    if (impl === undefined) {
      continue;
    }
    if (impl === null || typeof impl !== 'object') {
      throw new DefinitionError(`${field} must be an object (or class instance) of its methods`);
    }
    points[point] = impl;
  }
  const cp = points['control-plane'];
  if (cp !== undefined && !SHAPES.includes(/** @type {any} */ (cp).shape)) {
    throw new DefinitionError(`controlPlane.shape must be one of ${SHAPES.join(', ')}`);
  }
  const extensionPoints = POINTS.map((p) => p.point).filter((p) => points[p] !== undefined);
  if (extensionPoints.length === 0) {
    throw new DefinitionError('serves no extension point: define infrastructure, bootstrap, controlPlane or lifecycleHooks');
  }
  return Object.freeze({
    name,
    version,
    description,
    schema: new ConfigSchema(definition.configSchema ?? NO_CONFIG),
    validate: definition.validate,
    requestedGrants,
    extensionPoints: /** @type {ExtensionPoint[]} */ (Object.freeze(extensionPoints)),
    points: Object.freeze(points),
  });
}

/**
 * What `metadata.describe` answers for `provider`, in the contract's shape.
 *
 * # Guarantees
 *
 * - `extensionPoints` lists, in the contract's order, the points the definition serves; the
 *   others answer `unsupported`.
 * - `capabilities` come from `controlPlane` when the provider serves it, and are all off
 *   otherwise: a control-plane shape is declared exactly when `control-plane` is.
 * @param {Provider<any>} provider
 */
export function describe(provider) {
  const cp = /** @type {any} */ (provider.points['control-plane']);
  return {
    name: provider.name,
    version: provider.version,
    description: provider.description,
    extensionPoints: [...provider.extensionPoints],
    configSchema: provider.schema.text,
    capabilities: {
      controlPlaneShape: cp?.shape,
      controlPlaneScalable: cp !== undefined && cp.scalable === true,
      versionUpgrades: cp !== undefined && cp.versionUpgrades === true,
      chainsUpgrades: cp !== undefined && cp.chainsUpgrades === true,
    },
    requestedGrants: {
      httpHosts: [...provider.requestedGrants.httpHosts],
      secrets: [...provider.requestedGrants.secrets],
    },
  };
}
