// capw's JavaScript SDK: write capw providers as componentize-js components.
//
// A capw provider is a WebAssembly component the capw host calls through the
// `capw:provider@0.3.0` contract (wit/0.3 in the capw repository). This package turns that
// contract into ordinary JavaScript: `defineProvider` with one object per extension point it
// serves (the others answer `unsupported`), a config checked against its JSON Schema with its
// defaults applied, the call's `Context`, `ProviderError` for failures the host understands,
// the host's `log`, granted `secret`s and outbound HTTP (`request`).
//
// Start at README.md. A component's entry module imports `component.js`; a provider's unit
// tests import `testing.js`.

export { ConfigError, ConfigSchema, SchemaError, checkConfig, fieldError, jsonPointer, parseConfig } from './config.js';
export { Context } from './context.js';
export { ErrorCode, ProviderError, asProviderError } from './errors.js';
export { DefinitionError, NO_CONFIG, defineProvider, describe } from './provider.js';
export { Deletion, DEFAULT_REQUEUE_AFTER_MS, InProgress, KubernetesVersion, condition } from './types.js';
export { Hook, HOOKS, HookResponse } from './lifecycle-hooks.js';
export { ClusterState, MachinePhase } from './infrastructure.js';
export { BootstrapFormat, SecretsState } from './bootstrap.js';
export {
  CertificateAuthority, CertificateUsage, ControlPlaneShape, EtcdMembership, SecretMaterial, Step,
} from './control-plane.js';
export { log } from './log.js';
export { SecretError, secret, secretText } from './secrets.js';
export { HTTPError, Response, request } from './http.js';

/** @typedef {import('./config.js').FieldError} FieldError */
/** @typedef {import('./types.js').ClusterRef} ClusterRef */
/** @typedef {import('./types.js').MachineRef} MachineRef */
/** @typedef {import('./types.js').Endpoint} Endpoint */
/** @typedef {import('./types.js').Condition} Condition */
/** @typedef {import('./types.js').JoinToken} JoinToken */
/** @typedef {import('./lifecycle-hooks.js').HookRequest} HookRequest */
/** @typedef {import('./infrastructure.js').MachineStatus} MachineStatus */
/** @typedef {import('./infrastructure.js').ListedMachine} ListedMachine */
/** @typedef {import('./bootstrap.js').BootstrapRequest} BootstrapRequest */
/** @typedef {import('./bootstrap.js').JoinCredentials} JoinCredentials */
/** @typedef {import('./control-plane.js').Member} Member */
/** @typedef {import('./control-plane.js').HostedObject} HostedObject */
/** @typedef {import('./control-plane.js').PlanInput} PlanInput */
/** @typedef {import('./control-plane.js').PlanOutput} PlanOutput */
/** @typedef {import('./control-plane.js').ControlPlaneStatus} ControlPlaneStatus */
/** @typedef {import('./control-plane.js').CertificateSecret} CertificateSecret */
/** @typedef {import('./control-plane.js').CertificateRequest} CertificateRequest */
/** @typedef {import('./control-plane.js').SharedDatastore} SharedDatastore */
/** @typedef {import('./control-plane.js').ControlPlaneAccess} ControlPlaneAccess */
/** @typedef {import('./control-plane.js').ReconcileOutput} ReconcileOutput */
/**
 * @template C
 * @typedef {import('./provider.js').ProviderDefinition<C>} ProviderDefinition
 */
/**
 * @template C
 * @typedef {import('./provider.js').Provider<C>} Provider
 */
