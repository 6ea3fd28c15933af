// What a provider's unit tests need, under plain `node --test` with no component and no
// package fetched: call contexts, a control plane's input as the host builds it, checks of
// configs the way validate-config answers them, the join-token round the host makes, the
// exports as the host sees them, and a fake host whose secrets, HTTP answers and log the test
// controls.
//
// The assertions fail with node:assert's `AssertionError`, whose message says what was
// expected and what came instead; they work with any test runner.
//
//     import { test } from 'node:test';
//     import * as testing from '<sdk>/src/testing.js';
//
//     test('an empty zone is refused', () => {
//       const errors = testing.assertRefusedAt(provider, {zones: ['a', '']}, ['/zones/1']);
//       testing.assertFieldError(errors, '/zones/1', 'must not be empty');
//     });

import { AssertionError } from 'node:assert';

import { checkConfig, parseConfig } from './config.js';
import { Context } from './context.js';
import { EtcdMembership, planInputFromWit } from './control-plane.js';
import { exportProvider } from './dispatch.js';
import { installHost } from './host.js';
import { KubernetesVersion } from './types.js';

/** Namespace of the cluster a test call concerns. */
export const NAMESPACE = 'default';
/** Name of the cluster a test call concerns. */
export const CLUSTER_NAME = 'c1';
/** The idempotency key of a test call. */
export const IDEMPOTENCY_KEY = 'key-1';
/** The time a test call is allowed, in milliseconds. */
export const DEADLINE_MS = 10_000;

/**
 * The cluster `namespace/name`, with uid `uid-NAME`.
 * @param {string} namespace
 * @param {string} name
 * @returns {import('./types.js').ClusterRef}
 */
export function cluster(namespace, name) {
  return { namespace, name, uid: `uid-${name}` };
}

/**
 * The machine `name`, with uid `uid-NAME`.
 * @param {string} name
 * @returns {import('./types.js').MachineRef}
 */
export function machine(name) {
  return { name, uid: `uid-${name}` };
}

/**
 * Kubernetes `v1.MINOR.PATCH`.
 * @param {number} minor
 * @param {number} [patch]
 */
export function version(minor, patch = 0) {
  return new KubernetesVersion(1, minor, patch);
}

/**
 * A control-plane member as `plan` sees it: machine `name`, version v1.35.0, ready, created at
 * 0, not being deleted, etcd `unknown`, up to date and healthy, unless `fields` says otherwise
 * (`createdAt` may be a number; it becomes the `BigInt` a component passes).
 * @param {string} name
 * @param {Partial<Omit<import('./control-plane.js').Member, 'createdAt'>> & {createdAt?: number | bigint}} [fields]
 * @returns {import('./control-plane.js').Member}
 */
export function member(name, fields = {}) {
  return {
    machine: machine(name),
    version: version(35),
    failureDomain: undefined,
    ready: true,
    deleting: false,
    etcd: EtcdMembership.Unknown,
    outOfDate: [],
    unhealthy: [],
    ...fields,
    createdAt: BigInt(fields.createdAt ?? 0),
  };
}

/**
 * A control plane's input as the host passes it to `plan` and `reconcileControlPlane`:
 * version v1.35.0, 1 replica, no member, failure domain or endpoint, no `failuresTolerated`,
 * no hosted object, unless `fields` says otherwise. Frozen, as a call gets it; fit for the
 * exports (`exports(provider).controlPlane.plan(callSource(), input)`) too.
 * @param {Partial<import('./control-plane.js').PlanInput>} [fields]
 * @returns {import('./control-plane.js').PlanInput}
 */
export function planInput(fields = {}) {
  return planInputFromWit({
    version: version(35),
    replicas: 1,
    members: [],
    failureDomains: [],
    endpoint: undefined,
    failuresTolerated: undefined,
    objects: [],
    ...fields,
  });
}

/**
 * The fields of a test call's context; every one has a default.
 * @typedef {object} Call
 * @property {import('./types.js').ClusterRef} [cluster] Default: `default/c1`.
 * @property {string} [idempotencyKey] Default: {@link IDEMPOTENCY_KEY}.
 * @property {number} [deadlineMs] Counted from when the context is built. Default:
 *   {@link DEADLINE_MS}.
 * @property {() => number} [now] The clock the deadline is counted on. Default: `Date.now`.
 */

/**
 * A test call's `call-context` as the host lends it, config included, counting how often each
 * field is asked for (`reads`): what `exports(provider)` takes.
 * @param {unknown} config The config, as an object or its JSON text.
 * @param {Call} [call]
 */
export function callSource(config = {}, call = {}) {
  const now = call.now ?? Date.now;
  const started = now();
  const deadline = call.deadlineMs ?? DEADLINE_MS;
  const reads = { cluster: 0, config: 0, idempotencyKey: 0, remainingMs: 0 };
  const text = typeof config === 'string' ? config : JSON.stringify(config);
  return {
    reads,
    cluster() {
      reads.cluster += 1;
      return { ...(call.cluster ?? cluster(NAMESPACE, CLUSTER_NAME)) };
    },
    config() {
      reads.config += 1;
      return text;
    },
    idempotencyKey() {
      reads.idempotencyKey += 1;
      return call.idempotencyKey ?? IDEMPOTENCY_KEY;
    },
    remainingMs() {
      reads.remainingMs += 1;
      return Math.max(0, Math.round(deadline - (now() - started)));
    },
  };
}

/**
 * A call's context for `provider` with `config` parsed as every call parses it: checked
 * against the schema, its defaults applied.
 * @template C
 * @param {import('./provider.js').Provider<C>} provider
 * @param {unknown} [config] An object or its JSON text; default `{}`.
 * @param {Call} [call]
 * @returns {Context<C>}
 * @throws {AssertionError} when the config does not parse, naming the field.
 */
export function context(provider, config = {}, call = {}) {
  const source = callSource(config, call);
  try {
    return new Context(source, parseConfig(provider.schema, source.config()));
  } catch (e) {
    throw new AssertionError({ message: `test config ${source.config()}: ${e.message}` });
  }
}

/**
 * A call's context whose config is already built, as given.
 * @template C
 * @param {C} config
 * @param {Call} [call]
 * @returns {Context<C>}
 */
export function contextWith(config, call = {}) {
  return new Context(callSource(config, call), config);
}

/**
 * The exports of the component for `provider`, as the host calls them: the contract's shapes
 * in and out (`{tag: 'ok', val}`, `{tag: 'err', val}`). Pass `callSource(...)` for the context.
 * @param {import('./provider.js').Provider<any>} provider
 */
export function exports(provider) {
  return exportProvider(provider);
}

/** @param {import('./config.js').FieldError[]} errors */
function list(errors) {
  return errors.length === 0 ? ' none (accepted)' : errors.map((e) => `\n\`${e.path}\`: ${e.message}`).join('');
}

/** @param {unknown} config */
function text(config) {
  return typeof config === 'string' ? config : JSON.stringify(config);
}

/**
 * Checks that validate-config of `provider` accepts `config`: its schema and its `validate`.
 * @param {import('./provider.js').Provider<any>} provider
 * @param {unknown} config An object or its JSON text.
 * @throws {AssertionError}
 */
export function assertAccepted(provider, config) {
  const errors = checkConfig(provider.schema, text(config), provider.validate);
  if (errors.length > 0) {
    throw new AssertionError({ message: `validate-config of ${provider.name} refused ${text(config)}:${list(errors)}` });
  }
}

/**
 * Checks that validate-config of `provider` refuses `config` with errors at exactly `paths`
 * (JSON Pointers, in the order reported), and returns the errors for checks of their messages
 * ({@link assertFieldError}).
 * @param {import('./provider.js').Provider<any>} provider
 * @param {unknown} config An object or its JSON text.
 * @param {string[]} paths
 * @returns {import('./config.js').FieldError[]}
 * @throws {AssertionError}
 */
export function assertRefusedAt(provider, config, paths) {
  const errors = checkConfig(provider.schema, text(config), provider.validate);
  const found = errors.map((e) => e.path);
  if (errors.length === 0 || found.length !== paths.length || found.some((p, i) => p !== paths[i])) {
    throw new AssertionError({
      message: `validate-config of ${provider.name} on ${text(config)}: expected errors at ${JSON.stringify(paths)}, got:${list(errors)}`,
    });
  }
  return errors;
}

/**
 * Checks that `errors` has one at `path` whose message contains `contains`.
 * @param {import('./config.js').FieldError[]} errors
 * @param {string} path
 * @param {string} contains
 * @throws {AssertionError}
 */
export function assertFieldError(errors, path, contains) {
  if (!errors.some((e) => e.path === path && e.message.includes(contains))) {
    throw new AssertionError({ message: `expected an error at \`${path}\` containing ${JSON.stringify(contains)}, got:${list(errors)}` });
  }
}

/**
 * Runs the round the host makes to keep a join token valid (the conformance rule
 * `bootstrap.join-token.renews`) through the exports, so that the answers are checked as the
 * host checks them: `currentJoinToken` answers none, or a token in an item of `secrets`;
 * `renewJoinToken` then answers a token with a new id for the same item; with it stored there
 * as `<id>.<secret>`, `currentJoinToken` names it. No message shows a token's secret.
 * @param {import('./provider.js').Provider<any>} provider
 * @param {{name: string, data: Uint8Array | string}[]} secrets The cluster's secrets, as
 *   `clusterSecrets` made them.
 * @param {unknown} [config]
 * @returns {Promise<{current?: import('./types.js').JoinToken, renewed?: import('./types.js').JoinToken}>}
 *   The tokens as the host received them (`ttlSeconds` a `BigInt`); neither when the
 *   provider keeps no token.
 * @throws {AssertionError}
 */
export async function assertJoinTokenRenews(provider, secrets, config = {}) {
  const { bootstrap } = exports(provider);
  const fail = (/** @type {string} */ message) => new AssertionError({ message: `join token of ${provider.name}: ${message}` });
  const items = secrets.map((i) => ({ name: i.name, data: typeof i.data === 'string' ? new TextEncoder().encode(i.data) : i.data }));
  const current = await bootstrap.currentJoinToken(callSource(config), items);
  if (current.tag === 'err') {
    throw fail(`current-join-token failed: ${current.val.message}`);
  }
  if (current.val === undefined) {
    return {};
  }
  const item = current.val.item;
  if (!items.some((i) => i.name === item)) {
    throw fail(`current-join-token names item ${JSON.stringify(item)}, which the secrets do not have`);
  }
  const renewed = await bootstrap.renewJoinToken(callSource(config), items);
  if (renewed.tag === 'err') {
    throw fail(`renew-join-token failed: ${renewed.val.message}`);
  }
  if (renewed.val.item !== item) {
    throw fail(`renew-join-token answered item ${JSON.stringify(renewed.val.item)}, current-join-token names ${JSON.stringify(item)}`);
  }
  if (renewed.val.id === current.val.id) {
    throw fail(`renew-join-token answered the current token's id ${current.val.id}`);
  }
  const stored = [
    ...items.filter((i) => i.name !== item),
    { name: item, data: new TextEncoder().encode(`${renewed.val.id}.${renewed.val.secret}`) },
  ];
  const named = await bootstrap.currentJoinToken(callSource(config), stored);
  if (named.tag === 'err') {
    throw fail(`current-join-token with the renewed token stored failed: ${named.val.message}`);
  }
  if (named.val?.id !== renewed.val.id) {
    throw fail(`with the renewed token ${renewed.val.id} stored, current-join-token names ${named.val?.id ?? 'none'}`);
  }
  return { current: current.val, renewed: renewed.val };
}

/**
 * A request as the fake host received it.
 * @typedef {object} SentRequest
 * @property {string} method
 * @property {string} url scheme://authority/path?query
 * @property {[string, string][]} headers
 * @property {Uint8Array | undefined} body
 */

/**
 * What the fake host answers a request with: a response, or why there is none.
 * @typedef {{status: number, headers?: [string, string][] | Record<string, string>, body?: Uint8Array | string}
 *   | {failure: import('./host.js').TransportFailure}} FakeAnswer
 */

/**
 * A fake capw host for a test: the secrets it grants, how it answers HTTP requests, and the
 * log records it received. `install()` makes it the SDK's host until `restore()`; tests that
 * install a host must not run concurrently.
 */
export class FakeHost {
  /**
   * @param {object} [options]
   * @param {Record<string, Uint8Array | string | null>} [options.secrets] Granted secrets by
   *   grant name; `null` is granted but not found. Any other name is not granted.
   * @param {(request: SentRequest) => FakeAnswer | Promise<FakeAnswer>} [options.http] Answers
   *   each request; without it every request is denied, as for a provider granted no host.
   */
  constructor({ secrets = {}, http } = {}) {
    this.secrets = secrets;
    this.http = http;
    /** @type {{level: string, message: string, fields: Record<string, string>}[]} */
    this.logs = [];
    /** @type {SentRequest[]} */
    this.sent = [];
    /** @type {import('./host.js').Host | undefined} */
    this.previous = undefined;
  }

  /** Makes this the SDK's host; `restore()` puts the previous one back. */
  install() {
    const self = this;
    this.previous = installHost({
      log(level, message, fields) {
        self.logs.push({ level, message, fields: Object.fromEntries(fields) });
      },
      secret(name) {
        if (!Object.hasOwn(self.secrets, name)) {
          return { missing: 'not-granted' };
        }
        const value = self.secrets[name];
        if (value === null) {
          return { missing: 'not-found' };
        }
        return { value: typeof value === 'string' ? new TextEncoder().encode(value) : value };
      },
      async send(request) {
        const sent = { method: request.method, url: request.url, headers: request.headers, body: request.body };
        self.sent.push(sent);
        if (self.http === undefined) {
          return { failure: { kind: 'denied', detail: 'HTTP-request-denied' } };
        }
        const answer = await self.http(sent);
        if ('failure' in answer) {
          return { failure: answer.failure };
        }
        const headers = Array.isArray(answer.headers) ? answer.headers : Object.entries(answer.headers ?? {});
        const body = typeof answer.body === 'string' ? new TextEncoder().encode(answer.body) : answer.body ?? new Uint8Array();
        return {
          response: {
            status: answer.status,
            headers: headers.map(([k, v]) => /** @type {[string, string]} */ ([k.toLowerCase(), v])),
            body,
          },
        };
      },
    });
    return this;
  }

  /** Puts back the host this one replaced. */
  restore() {
    if (this.previous !== undefined) {
      installHost(this.previous);
      this.previous = undefined;
    }
  }
}

/**
 * Installs a fake host for the rest of a node:test test, restored when it ends.
 * @param {{after: (fn: () => void) => void}} t The test's context.
 * @param {ConstructorParameters<typeof FakeHost>[0]} [options]
 * @returns {FakeHost}
 */
export function useHost(t, options) {
  const host = new FakeHost(options).install();
  t.after(() => host.restore());
  return host;
}

/**
 * A JSON response with `status` and `body`.
 * @param {number} status
 * @param {unknown} body A value, sent as its JSON text.
 * @returns {FakeAnswer}
 */
export function jsonResponse(status, body) {
  return { status, headers: [['content-type', 'application/json']], body: JSON.stringify(body) };
}
