// The seam between the SDK and whatever serves its capabilities: the capw host inside a
// component (installed by `component.js` from the component's imports), nothing in a plain
// Node.js process, or a test's fake host (`testing.js`).

/** @typedef {'trace' | 'debug' | 'info' | 'warn' | 'error'} Level The contract's log levels. */

/**
 * What the host answers for a secret: its value, or why there is none.
 * @typedef {{value: Uint8Array} | {missing: 'not-granted' | 'not-found'}} SecretAnswer
 */

/**
 * A request as the transport sends it.
 * @typedef {object} Outgoing
 * @property {string} method
 * @property {string} url An absolute http:// or https:// URL, already checked.
 * @property {[string, string][]} headers
 * @property {Uint8Array | undefined} body
 * @property {number | undefined} timeoutMs Bound on the whole exchange.
 */

/**
 * A whole response.
 * @typedef {object} Incoming
 * @property {number} status
 * @property {[string, string][]} headers Names lowercase.
 * @property {Uint8Array} body
 */

/**
 * A request that got no response.
 * @typedef {object} TransportFailure
 * @property {'denied' | 'connect' | 'timeout' | 'invalid-url' | 'invalid-header' | 'other'} kind
 * @property {string} detail The transport's own word for it.
 */

/**
 * The capabilities the contract imports.
 * @typedef {object} Host
 * @property {(level: Level, message: string, fields: [string, string][]) => void} log
 * @property {(name: string) => SecretAnswer} secret
 * @property {(request: Outgoing) => Promise<{response: Incoming} | {failure: TransportFailure}>} send
 */

/**
 * The host of a plain Node.js process (a unit test without a fake host): records go to
 * stderr, no secret is granted and no request is sent.
 * @type {Readonly<Host>}
 */
export const nativeHost = Object.freeze(/** @type {Host} */ ({
  log(level, message, fields) {
    const tail = fields.map(([k, v]) => ` ${k}=${JSON.stringify(v)}`).join('');
    console.error(`[${level}] ${message}${tail}`);
  },
  secret() {
    return { missing: 'not-granted' };
  },
  async send() {
    return {
      failure: {
        kind: 'other',
        detail: 'no wasi:http host: outbound HTTP works only inside a component built with the http feature (or with a fake host of @capw/sdk/testing)',
      },
    };
  },
}));

let current = nativeHost;

/** The host the SDK talks to now. */
export function currentHost() {
  return current;
}

/**
 * Makes `host` the one the SDK talks to, and answers the one it replaces.
 * @param {Host} host
 * @returns {Host}
 */
export function installHost(host) {
  const previous = current;
  current = host;
  return previous;
}
