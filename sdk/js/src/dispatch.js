// The glue between the contract's exports, as componentize-js calls them, and a provider:
// `exportProvider` answers the five exported interfaces of the `provider` world.
//
// It imports no bindings, so it runs under plain Node.js too: the SDK's tests drive it with a
// record for the host's `call-context`, exactly as the component's bindings do.
//
// Every function answers the contract's `result` as `{tag: 'ok', val}` or `{tag: 'err', val}`,
// which componentize-js passes on as it is, and never throws: whatever a provider throws
// becomes a `provider-error` (`asProviderError`), so a provider's bug is an error the host
// shows on the object, not a trap.

import { checkConfig, isPointer, parseConfig } from './config.js';
import { Context } from './context.js';
import { asProviderError, ProviderError } from './errors.js';
import { describe } from './provider.js';
import { deletionToWit, providerErrorToWit } from './conv.js';
import { hookRequestFromWit, hookResponseToWit } from './lifecycle-hooks.js';
import {
  clusterStateToWit, listedMachinesToWit, machineSpecFromWit, machineStatusToWit,
} from './infrastructure.js';
import {
  BOOTSTRAP_DEFAULTS, bootstrapDataToWit, bootstrapRequestFromWit, currentJoinTokenToWit, kubeconfigToWit,
  renewedJoinTokenToWit, secretsStateToWit,
} from './bootstrap.js';
import { planInputFromWit, planOutputToWit, reconcileOutputToWit } from './control-plane.js';

/**
 * @param {unknown} val
 */
const ok = (val) => ({ tag: 'ok', val });

/**
 * @param {unknown} error
 */
const err = (error) => ({ tag: 'err', val: providerErrorToWit(asProviderError(error)) });

/**
 * The answers of the methods a provider may leave out other than with `unsupported`, by point:
 * what the Rust SDK's default methods answer.
 * @type {Readonly<Partial<Record<import('./provider.js').ExtensionPoint, Readonly<Record<string, Function>>>>>}
 */
const DEFAULTS = Object.freeze({ bootstrap: BOOTSTRAP_DEFAULTS });

/**
 * Runs one extension-point function of `provider`: `unsupported` when the provider does not
 * serve the point, or leaves the method out and it has no default (without reading the
 * config); `invalid-input` when the config does not parse; otherwise the answer of the method,
 * or of its default, in the contract's shape.
 *
 * @param {import('./provider.js').Provider<any>} provider
 * @param {import('./provider.js').ExtensionPoint} point
 * @param {string} method The SDK's method name, e.g. `reconcileCluster`.
 * @param {string} what The contract's name, e.g. `infrastructure.reconcile-cluster`.
 * @param {import('./context.js').CallSource} source The call's context as the host lent it.
 * @param {unknown[]} args The method's other arguments, already converted.
 * @param {(answer: any) => unknown} toWit
 */
async function call(provider, point, method, what, source, args, toWit) {
  const impl = /** @type {any} */ (provider.points[point]);
  if (impl === undefined) {
    return err(ProviderError.unsupported(what));
  }
  const own = typeof impl[method] === 'function';
  const fallback = DEFAULTS[point]?.[method];
  if (!own && fallback === undefined) {
    return err(ProviderError.unsupported(what));
  }
  try {
    const ctx = new Context(source, parseConfig(provider.schema, source.config()));
    const answer = await (own ? impl[method](ctx, ...args) : fallback(ctx, ...args));
    return ok(toWit(answer));
  } catch (e) {
    return err(e);
  }
}

/**
 * `convert(value)`, with a failure of the conversion answered as the call's error.
 * @template T
 * @param {() => T} convert
 */
function converted(convert) {
  try {
    return { value: convert() };
  } catch (e) {
    return { failed: err(e) };
  }
}

/**
 * The exports of the contract's `provider` world for `provider`: the objects named
 * `metadata`, `infrastructure`, `bootstrap`, `controlPlane` and `lifecycleHooks` that the
 * component's module exports (component.js).
 *
 * # Guarantees
 *
 * - `metadata.describe` is `describe(provider)`; `metadata.validateConfig` is
 *   `checkConfig(provider.schema, config, provider.validate)`.
 * - A point the provider does not serve, or a method it leaves out, answers a permanent
 *   `unsupported` error without reading the config; except `bootstrap.currentJoinToken`,
 *   which answers `none` when a bootstrap provider leaves it out (its config still parsed, as
 *   for every call).
 * - A config that does not parse, or breaks the schema, answers a permanent `invalid-input`
 *   error naming the field.
 * - Nothing a provider throws escapes: see `asProviderError`.
 *
 * @param {import('./provider.js').Provider<any>} provider
 */
export function exportProvider(provider) {
  const infra = 'infrastructure';
  const boot = 'bootstrap';
  const cp = 'control-plane';
  return {
    metadata: {
      describe: () => describe(provider),
      /** @param {string} config */
      validateConfig(config) {
        const errors = checkConfig(provider.schema, config, provider.validate);
        if (errors.length === 0) {
          return ok(undefined);
        }
        return { tag: 'err', val: errors.map((e) => ({ path: isPointer(e.path) ? e.path : '', message: e.message })) };
      },
    },
    infrastructure: {
      reconcileCluster: (ctx) => call(provider, infra, 'reconcileCluster', 'infrastructure.reconcile-cluster', ctx, [], clusterStateToWit),
      deleteCluster: (ctx) => call(provider, infra, 'deleteCluster', 'infrastructure.delete-cluster', ctx, [], (a) => deletionToWit(a, 'deleteCluster')),
      async reconcileMachine(ctx, spec) {
        const arg = converted(() => machineSpecFromWit(spec));
        return arg.failed ?? call(provider, infra, 'reconcileMachine', 'infrastructure.reconcile-machine', ctx, [arg.value], machineStatusToWit);
      },
      deleteMachine: (ctx, machine) => call(provider, infra, 'deleteMachine', 'infrastructure.delete-machine', ctx, [Object.freeze({ ...machine })], (a) => deletionToWit(a, 'deleteMachine')),
      listMachines: (ctx) => call(provider, infra, 'listMachines', 'infrastructure.list-machines', ctx, [], listedMachinesToWit),
    },
    bootstrap: {
      clusterSecrets: (ctx) => call(provider, boot, 'clusterSecrets', 'bootstrap.cluster-secrets', ctx, [], secretsStateToWit),
      async generate(ctx, request) {
        const arg = converted(() => bootstrapRequestFromWit(request));
        return arg.failed ?? call(provider, boot, 'generate', 'bootstrap.generate', ctx, [arg.value], bootstrapDataToWit);
      },
      kubeconfig: (ctx, endpoint, secrets) => call(provider, boot, 'kubeconfig', 'bootstrap.kubeconfig', ctx, [Object.freeze({ ...endpoint }), secrets], kubeconfigToWit),
      currentJoinToken: (ctx, secrets) => call(provider, boot, 'currentJoinToken', 'bootstrap.current-join-token', ctx, [secrets], currentJoinTokenToWit),
      renewJoinToken: (ctx, secrets) => call(provider, boot, 'renewJoinToken', 'bootstrap.renew-join-token', ctx, [secrets], renewedJoinTokenToWit),
    },
    controlPlane: {
      async plan(ctx, input) {
        const arg = converted(() => planInputFromWit(input));
        return arg.failed ?? call(provider, cp, 'plan', 'control-plane.plan', ctx, [arg.value], planOutputToWit);
      },
      async reconcileControlPlane(ctx, input) {
        const arg = converted(() => planInputFromWit(input));
        return arg.failed ?? call(provider, cp, 'reconcileControlPlane', 'control-plane.reconcile-control-plane', ctx, [arg.value], reconcileOutputToWit);
      },
      deleteControlPlane: (ctx) => call(provider, cp, 'deleteControlPlane', 'control-plane.delete-control-plane', ctx, [], (a) => deletionToWit(a, 'deleteControlPlane')),
    },
    lifecycleHooks: {
      async handle(ctx, request) {
        const arg = converted(() => hookRequestFromWit(request));
        return arg.failed ?? call(provider, 'lifecycle-hooks', 'handle', 'lifecycle-hooks.handle', ctx, [arg.value], hookResponseToWit);
      },
    },
  };
}
