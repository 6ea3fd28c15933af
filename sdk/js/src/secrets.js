// Secrets the operator granted to this provider in its WasmProvider, by grant name.
//
// Only granted secrets are readable: the provider's `requestedGrants` asks, the operator
// decides. Never log a secret's value or put it in a message.

import { ErrorCode, ProviderError } from './errors.js';
import { currentHost } from './host.js';

/** A secret that could not be read. */
export class SecretError extends Error {
  /**
   * @param {string} name The grant name asked for.
   * @param {'not-granted' | 'not-found'} reason `not-granted`: no grant of that name, permanent
   *   until the grants change; `not-found`: granted, but the Secret does not exist (yet).
   */
  constructor(name, reason) {
    super(reason === 'not-found'
      ? `secret \`${name}\`: granted, but the secret does not exist`
      : `secret \`${name}\`: not granted to this provider`);
    this.name = 'SecretError';
    this.secretName = name;
    this.reason = reason;
  }

  /**
   * A missing grant is a permanent `not-granted`; a granted secret that does not exist yet may
   * appear, so the host retries.
   */
  providerError() {
    return this.reason === 'not-found'
      ? ProviderError.retryable(ErrorCode.Unavailable, this.message)
      : ProviderError.permanent(ErrorCode.NotGranted, this.message);
  }
}

/**
 * The value of the secret granted under `name`.
 * @param {string} name
 * @returns {Uint8Array}
 * @throws {SecretError}
 */
export function secret(name) {
  const answer = currentHost().secret(name);
  if ('value' in answer) {
    return answer.value;
  }
  throw new SecretError(name, answer.missing);
}

/**
 * The value of the secret granted under `name`, as UTF-8 text.
 * @param {string} name
 * @returns {string}
 * @throws {SecretError}
 */
export function secretText(name) {
  return new TextDecoder().decode(secret(name));
}
