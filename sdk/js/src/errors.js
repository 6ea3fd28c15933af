// Failed calls as the host understands them: the contract's `provider-error`.

/**
 * Why a call failed, by the contract's names.
 * @typedef {'invalid-input' | 'not-granted' | 'unauthorized' | 'quota-exceeded' | 'unavailable'
 *   | 'conflict' | 'unsupported' | 'internal'} ErrorCodeName
 */

/** The contract's error codes. The `retryable` flag of an error decides, not its code. */
export const ErrorCode = Object.freeze({
  /** The config or request is invalid; retrying the same input fails again. */
  InvalidInput: 'invalid-input',
  /** The provider lacks a grant it needs (a secret, an HTTP host). */
  NotGranted: 'not-granted',
  /** The backend refused the credentials. */
  Unauthorized: 'unauthorized',
  /** The backend is out of capacity or quota. */
  QuotaExceeded: 'quota-exceeded',
  /** The backend is unreachable, overloaded or rate-limiting. */
  Unavailable: 'unavailable',
  /** The resource is in a state that forbids the operation now. */
  Conflict: 'conflict',
  /** The provider does not implement this function, or this case of it. */
  Unsupported: 'unsupported',
  /** Anything else. */
  Internal: 'internal',
});

const CODES = new Set(Object.values(ErrorCode));

/** The largest value of a WIT `u32`: hints in milliseconds saturate there. */
export const U32_MAX = 0xffff_ffff;

/**
 * `ms` as a WIT `u32` of milliseconds: rounded up (a hint of 0.5 ms is not "now") and
 * saturated; not a finite number is a `TypeError`.
 * @param {number} ms
 * @returns {number}
 */
export function millis(ms) {
  if (typeof ms !== 'number' || Number.isNaN(ms)) {
    throw new TypeError(`expected milliseconds as a number, got ${String(ms)}`);
  }
  return Math.min(U32_MAX, Math.max(0, Math.ceil(ms)));
}

/**
 * A failed call: the host turns it into a condition on the object and, when `retryable`,
 * calls again after `retryAfterMs` (or its own backoff when that is `undefined`).
 *
 * Throw it from an extension-point method, or anything else: see {@link asProviderError} for
 * what another error becomes. The message never holds secret material.
 */
export class ProviderError extends Error {
  /**
   * @param {ErrorCodeName} code
   * @param {string} message What went wrong, for humans.
   * @param {{retryable?: boolean, retryAfterMs?: number, cause?: unknown}} [options]
   */
  constructor(code, message, { retryable = false, retryAfterMs = undefined, cause } = {}) {
    super(message, cause === undefined ? undefined : { cause });
    if (!CODES.has(code)) {
      throw new TypeError(`unknown error code ${JSON.stringify(code)}`);
    }
    this.name = 'ProviderError';
    /** @type {ErrorCodeName} */
    this.code = code;
    /** Whether the same call may succeed later without a change of input. */
    this.retryable = retryable || retryAfterMs !== undefined;
    /** When to retry, in milliseconds; `undefined` leaves it to the host. */
    this.retryAfterMs = retryAfterMs === undefined ? undefined : millis(retryAfterMs);
  }

  /**
   * An error the host retries: an outage, a rate limit, a conflict that resolves itself.
   * @param {ErrorCodeName} code
   * @param {string} message
   */
  static retryable(code, message) {
    return new ProviderError(code, message, { retryable: true });
  }

  /**
   * An error the host does not retry: the same input fails again.
   * @param {ErrorCodeName} code
   * @param {string} message
   */
  static permanent(code, message) {
    return new ProviderError(code, message);
  }

  /**
   * The answer of a function, or a case of one, that the provider does not implement:
   * `what` names it, e.g. `bootstrap.generate`.
   * @param {string} what
   */
  static unsupported(what) {
    return new ProviderError(ErrorCode.Unsupported, `${what} is not supported by this provider`);
  }

  /**
   * A copy that asks the host to retry after `ms` milliseconds (e.g. from an HTTP
   * `Retry-After`). The copy is retryable: a retry hint on an error that must not be retried
   * would contradict itself.
   * @param {number} ms
   * @returns {ProviderError}
   */
  retryAfter(ms) {
    return new ProviderError(this.code, this.message, { retryAfterMs: ms, cause: this.cause });
  }
}

/**
 * What `error` tells the host.
 *
 * - A {@link ProviderError} says its own code and retry hints.
 * - An error with a `providerError()` method (a config, secret or HTTP error of this SDK)
 *   says what that method answers.
 * - Anything else is a retryable `internal` error with its message: the host backs off and
 *   calls again, as a controller requeues on an error it does not know.
 * @param {unknown} error
 * @returns {ProviderError}
 */
export function asProviderError(error) {
  if (error instanceof ProviderError) {
    return error;
  }
  const knows = /** @type {{providerError?: unknown}} */ (error);
  if (knows !== null && typeof knows === 'object' && typeof knows.providerError === 'function') {
    const known = knows.providerError();
    if (known instanceof ProviderError) {
      return known;
    }
  }
  const message = error instanceof Error ? error.message : String(error);
  return new ProviderError(ErrorCode.Internal, message || 'unknown error', {
    retryable: true,
    cause: error,
  });
}
