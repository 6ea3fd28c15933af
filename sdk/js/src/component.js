// The entry a component's module imports: it serves the SDK's host capabilities from the
// component's imports and answers the exports of the contract's `provider` world.
//
// Only a component imports this module: its imports (`capw:provider/host-log@0.3.0`, ...)
// exist inside a componentize-js build alone. A provider's entry module is three lines:
//
//     import { exportProvider } from '<sdk>/src/component.js';
//     import { provider } from './provider.js';
//     export const { metadata, infrastructure, bootstrap, controlPlane, lifecycleHooks } =
//       exportProvider(provider);

import { log as hostLog } from 'capw:provider/host-log@0.3.0';
import { get as hostSecret } from 'capw:provider/host-secrets@0.3.0';

import { exportProvider as exportsOf } from './dispatch.js';
import { installHost } from './host.js';
import { transportFailure } from './http.js';

/**
 * The host of a component: the contract's imports, and `fetch` over wasi:http when the
 * component was built with componentize-js's `http` feature.
 * @type {import('./host.js').Host}
 */
const componentHost = Object.freeze({
  log(level, message, fields) {
    hostLog(level, message, fields);
  },
  secret(name) {
    try {
      return { value: hostSecret(name) };
    } catch (e) {
      // componentize-js throws the contract's `secret-error` as the error's payload.
      const tag = /** @type {any} */ (e)?.payload?.tag;
      if (tag === 'not-found' || tag === 'not-granted') {
        return { missing: tag };
      }
      throw e;
    }
  },
  async send(request) {
    if (typeof globalThis.fetch !== 'function') {
      return {
        failure: {
          kind: 'other',
          detail: 'this component was built without outbound HTTP (componentize-js\'s http feature)',
        },
      };
    }
    const abort = request.timeoutMs === undefined ? undefined : new AbortController();
    const timer = abort === undefined ? undefined : setTimeout(() => abort.abort(), request.timeoutMs);
    try {
      const response = await fetch(request.url, {
        method: request.method,
        headers: request.headers,
        body: request.body,
        signal: abort?.signal,
      });
      const body = new Uint8Array(await response.arrayBuffer());
      const headers = /** @type {[string, string][]} */ ([...response.headers]);
      return { response: { status: response.status, headers, body } };
    } catch (e) {
      return { failure: transportFailure(e) };
    } finally {
      if (timer !== undefined) {
        clearTimeout(timer);
      }
    }
  },
});

installHost(componentHost);

/**
 * The exports of the contract's `provider` world for `provider` (see dispatch.js), with the
 * SDK's log, secrets and HTTP served by this component's host.
 * @param {import('./provider.js').Provider<any>} provider
 */
export function exportProvider(provider) {
  return exportsOf(provider);
}
