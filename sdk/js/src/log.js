// Structured records into the host's logs, tagged by the host with the provider and the call.
//
// Cheap: the host drops records below its level and bounds the number and size of records per
// call. Never log secret material (bootstrap data, kubeconfigs, secret values).

import { currentHost } from './host.js';

/**
 * A record's fields: an object whose values are written as strings (`{cluster: 'c1'}`).
 * @typedef {Record<string, unknown>} Fields
 */

/**
 * @param {import('./host.js').Level} level
 * @param {string} message
 * @param {Fields} [fields]
 */
function write(level, message, fields = {}) {
  const pairs = Object.entries(fields).map(([k, v]) => /** @type {[string, string]} */ ([
    k,
    typeof v === 'string' ? v : v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v),
  ]));
  currentHost().log(level, String(message), pairs);
}

/**
 * The host's log: `log.info('instance created', {cluster: name, instance: id})`.
 */
export const log = Object.freeze({
  /** @param {string} message @param {Fields} [fields] */
  trace: (message, fields) => write('trace', message, fields),
  /** @param {string} message @param {Fields} [fields] */
  debug: (message, fields) => write('debug', message, fields),
  /** @param {string} message @param {Fields} [fields] */
  info: (message, fields) => write('info', message, fields),
  /** @param {string} message @param {Fields} [fields] */
  warn: (message, fields) => write('warn', message, fields),
  /** @param {string} message @param {Fields} [fields] */
  error: (message, fields) => write('error', message, fields),
});
