// The context every extension-point call receives.
//
// From contract 0.2 on, the host lends each call its context as a resource (`borrow<call-context>`)
// and the provider asks for the fields it reads. `Context` keeps that: the config is parsed on
// entry (every call needs it), the cluster and the idempotency key are asked of the host the
// first time they are read, once per call, and the time left is asked for live.

/**
 * The fields of a call's context as the host serves them: the contract's `call-context`
 * inside a component, a record in a unit test (`testing.js`).
 * @typedef {object} CallSource
 * @property {() => import('./types.js').ClusterRef} cluster
 * @property {() => string} config
 * @property {() => string} idempotencyKey
 * @property {() => number} remainingMs
 */

/**
 * What a call knows about its caller's intent, with the config already parsed.
 *
 * # Guarantees
 *
 * - `config` is the provider's config for this call, with the ClusterClass's patches and the
 *   pool's overrides applied and the schema's defaults filled in; the host checked it with the
 *   schema and validate-config first.
 * - `idempotencyKey` is stable for one intent across retries and host restarts: two calls with
 *   the same key must never create two resources.
 *
 * @template C
 */
export class Context {
  /** @type {CallSource} */
  #source;
  /** @type {import('./types.js').ClusterRef | undefined} */
  #cluster;
  /** @type {string | undefined} */
  #key;

  /**
   * The context of a call whose fields come from `source`, with its config already parsed.
   * The SDK builds the contexts of real calls itself; `testing.context` builds them for tests.
   * @param {CallSource} source
   * @param {C} config
   */
  constructor(source, config) {
    this.#source = source;
    /** The provider's config for this call. */
    this.config = config;
  }

  /** The cluster the call concerns; asked of the host once, when first read. */
  get cluster() {
    this.#cluster ??= Object.freeze({ ...this.#source.cluster() });
    return this.#cluster;
  }

  /**
   * Stable for one intent across retries, restarts and crashes: two calls with the same key
   * must never create two resources. Asked of the host once, when first read.
   */
  get idempotencyKey() {
    this.#key ??= this.#source.idempotencyKey();
    return this.#key;
  }

  /**
   * Milliseconds left now before the host cancels this call; 0 once it has passed. Bound
   * outbound requests by it, so that a slow backend yields an error the provider chose rather
   * than a cancellation.
   * @returns {number}
   */
  remainingMs() {
    return Math.max(0, this.#source.remainingMs());
  }

  /** The config and the fields read so far: printing a context asks the host for nothing. */
  toString() {
    const parts = [`config: ${JSON.stringify(this.config)}`];
    if (this.#cluster !== undefined) {
      parts.push(`cluster: ${this.#cluster.namespace}/${this.#cluster.name}`);
    }
    if (this.#key !== undefined) {
      parts.push(`idempotencyKey: ${JSON.stringify(this.#key)}`);
    }
    return `Context { ${parts.join(', ')} }`;
  }
}
