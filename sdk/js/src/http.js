// Outbound HTTP through the host's wasi:http, to the authorities granted to the provider.
//
// Inside a component the request goes through `fetch`, which componentize-js implements over
// `wasi:http/outgoing-handler` when the component is built with its `http` feature; the host
// lets it reach only the authorities (host or host:port) granted in the provider's
// WasmProvider, and refuses any other with `HTTP-request-denied`. A component built without
// the feature imports no wasi:http, and every request fails with an `HTTPError` of kind
// `other` that says so.
//
// A call must not wait for slow work to finish: when a backend says "later", answer
// in-progress or a retryable error (`Response.throttled`) and let the host call again.

import { ErrorCode, ProviderError } from './errors.js';
import { currentHost } from './host.js';

/**
 * @typedef {'denied' | 'connect' | 'timeout' | 'invalid-url' | 'invalid-header' | 'other'} HTTPErrorKind
 *   Why a request got no response: `denied`, its authority is not granted (permanent until
 *   the operator changes the grants); `connect`, no connection (DNS, refused, reset); `timeout`;
 *   `invalid-url`, not an absolute http:// or https:// URL this client sends; `invalid-header`,
 *   a header the host refused; `other`, any other failure, or no wasi:http at all.
 */

/** A request that got no response. */
export class HTTPError extends Error {
  /**
   * @param {HTTPErrorKind} kind
   * @param {string} authority Where the request went (host:port), when known.
   * @param {string} detail The transport's word or the reason.
   */
  constructor(kind, authority, detail) {
    super(HTTPError.describe(kind, authority, detail));
    this.name = 'HTTPError';
    this.kind = kind;
    this.authority = authority;
    this.detail = detail;
  }

  /**
   * @param {HTTPErrorKind} kind
   * @param {string} authority
   * @param {string} detail
   */
  static describe(kind, authority, detail) {
    switch (kind) {
      case 'denied':
        return `request to \`${authority}\` denied: the host is not granted to this provider`;
      case 'connect':
        return `cannot connect to \`${authority}\`: ${detail}`;
      case 'timeout':
        return `request to \`${authority}\` timed out: ${detail}`;
      case 'invalid-url':
        return `invalid url: ${detail}`;
      case 'invalid-header':
        return `invalid or forbidden header: ${detail}`;
      default:
        return authority === '' ? `http request failed: ${detail}` : `request to \`${authority}\` failed: ${detail}`;
    }
  }

  /**
   * A denied host is a missing grant, a bad URL or header bad input; transport failures are
   * retryable.
   */
  providerError() {
    switch (this.kind) {
      case 'denied':
        return ProviderError.permanent(ErrorCode.NotGranted, this.message);
      case 'connect':
      case 'timeout':
        return ProviderError.retryable(ErrorCode.Unavailable, this.message);
      case 'invalid-url':
      case 'invalid-header':
        return ProviderError.permanent(ErrorCode.InvalidInput, this.message);
      default:
        return ProviderError.retryable(ErrorCode.Internal, this.message);
    }
  }
}

/**
 * @typedef {object} RequestOptions
 * @property {string} [method] GET (the default), HEAD, POST, PUT, PATCH or DELETE.
 * @property {Record<string, string> | [string, string][]} [headers] A list sends a name given
 *   twice with both values.
 * @property {Uint8Array | string} [body] A string is sent as UTF-8; a body gets a
 *   `content-length` unless one is set.
 * @property {number} [timeoutMs] Bound on the whole exchange; `ctx.remainingMs()` is a good
 *   one. Unset, the call's deadline bounds it.
 */

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The request as the transport sends it, or the `HTTPError` that says why it cannot be sent.
 * @param {string} url
 * @param {RequestOptions} options
 * @returns {import('./host.js').Outgoing}
 */
export function outgoing(url, options = {}) {
  const invalid = (reason) => new HTTPError('invalid-url', '', `\`${url}\`: ${reason}`);
  if (typeof url !== 'string') {
    throw invalid('not a string');
  }
  // Whitespace or control characters would be dropped or escaped by a URL parser, hiding what
  // is really sent from a reader of the config.
  if (/[\u0000-\u0020\u007f]/u.test(url)) {
    throw invalid('contains whitespace or control characters');
  }
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)([^#]*)/u.exec(url);
  if (m === null) {
    throw invalid('not an absolute URL');
  }
  const scheme = m[1].toLowerCase();
  if (scheme !== 'http' && scheme !== 'https') {
    throw invalid('scheme must be http or https');
  }
  const authority = m[2];
  if (authority === '') {
    throw invalid('missing host');
  }
  // user@host hides the real destination; the grants are by host, so say plainly where a
  // request goes.
  if (authority.includes('@')) {
    throw invalid('user info is not supported');
  }
  const method = (options.method ?? 'GET').toUpperCase();
  if (!METHODS.has(method)) {
    throw new HTTPError('other', authority, `method ${method} is not supported`);
  }
  const pairs = Array.isArray(options.headers)
    ? options.headers.map(([k, v]) => [String(k), String(v)])
    : Object.entries(options.headers ?? {}).map(([k, v]) => [k, String(v)]);
  for (const [name, value] of pairs) {
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/u.test(name) || /[\r\n\u0000]/u.test(value)) {
      throw new HTTPError('invalid-header', authority, `\`${name}\``);
    }
  }
  const body = typeof options.body === 'string' ? new TextEncoder().encode(options.body) : options.body;
  if (body !== undefined && body.length > 0 && !pairs.some(([k]) => k.toLowerCase() === 'content-length')) {
    // Without a length the body goes chunked, which some APIs refuse.
    pairs.push(['content-length', String(body.length)]);
  }
  const path = m[3] === '' ? '/' : m[3].startsWith('/') ? m[3] : `/${m[3]}`;
  return {
    method,
    url: `${scheme}://${authority}${path}`,
    headers: /** @type {[string, string][]} */ (pairs),
    body,
    timeoutMs: options.timeoutMs,
  };
}

/** A whole response. Any status is a response, 4xx and 5xx included. */
export class Response {
  /**
   * @param {number} status
   * @param {[string, string][]} headers Names lowercase, in received order.
   * @param {Uint8Array} body
   */
  constructor(status, headers, body) {
    this.status = status;
    this.headers = headers;
    this.body = body;
  }

  /**
   * The first value of the header `name`, compared case-insensitively; `undefined` when absent.
   * @param {string} name
   */
  header(name) {
    const lower = name.toLowerCase();
    return this.headers.find(([k]) => k.toLowerCase() === lower)?.[1];
  }

  /** The body as UTF-8 text. */
  text() {
    return new TextDecoder().decode(this.body);
  }

  /**
   * The body parsed as JSON.
   * @throws {ProviderError} a retryable `unavailable` when it is not JSON: a backend that
   *   answers garbage is broken for now, not the call's input.
   */
  json() {
    try {
      return JSON.parse(this.text());
    } catch (e) {
      throw ProviderError.retryable(ErrorCode.Unavailable, `backend answered HTTP ${this.status} with a body that is not JSON: ${e.message}`);
    }
  }

  /** A 2xx status. */
  get isSuccess() {
    return this.status >= 200 && this.status < 300;
  }

  /**
   * `Retry-After` in its delta-seconds form, in milliseconds; `undefined` for the HTTP-date
   * form and a missing or malformed header, where the host's own backoff applies.
   */
  retryAfterMs() {
    const value = this.header('retry-after')?.trim();
    return value !== undefined && /^\d{1,9}$/u.test(value) ? Number(value) * 1000 : undefined;
  }

  /**
   * For 429 and 503, the retryable `unavailable` error to answer the call with, carrying
   * `Retry-After`; `undefined` for every other status.
   */
  throttled() {
    if (this.status !== 429 && this.status !== 503) {
      return undefined;
    }
    const e = ProviderError.retryable(ErrorCode.Unavailable, `backend answered HTTP ${this.status}`);
    const after = this.retryAfterMs();
    return after === undefined ? e : e.retryAfter(after);
  }

  /**
   * `undefined` for a 2xx status, else the error the status means for a call: 429 and 503 as
   * `throttled`; 401 and 403 `unauthorized`; 409 a retryable `conflict`; other 4xx
   * `invalid-input`; other statuses a retryable `unavailable`.
   * @returns {ProviderError | undefined}
   */
  errorForStatus() {
    if (this.isSuccess) {
      return undefined;
    }
    const throttled = this.throttled();
    if (throttled !== undefined) {
      return throttled;
    }
    const message = `backend answered HTTP ${this.status}`;
    if (this.status === 401 || this.status === 403) {
      return ProviderError.permanent(ErrorCode.Unauthorized, message);
    }
    if (this.status === 409) {
      return ProviderError.retryable(ErrorCode.Conflict, message);
    }
    if (this.status >= 400 && this.status < 500) {
      return ProviderError.permanent(ErrorCode.InvalidInput, message);
    }
    return ProviderError.retryable(ErrorCode.Unavailable, message);
  }
}

/**
 * Sends a request and reads the whole response.
 * @param {string} url An absolute http:// or https:// URL.
 * @param {RequestOptions} [options]
 * @returns {Promise<Response>}
 * @throws {HTTPError} when there is no response.
 */
export async function request(url, options = {}) {
  const out = outgoing(url, options);
  const authority = out.url.split('/')[2];
  const answer = await currentHost().send(out);
  if ('failure' in answer) {
    throw new HTTPError(answer.failure.kind, authority, answer.failure.detail);
  }
  const { status, headers, body } = answer.response;
  return new Response(status, headers, body);
}

/**
 * What a `fetch` rejection means, from its message: wasi:http's error codes reach JavaScript
 * only as text (e.g. `HTTP-request-denied`, `connection-refused`).
 * @param {unknown} error
 * @returns {import('./host.js').TransportFailure}
 */
export function transportFailure(error) {
  const detail = error instanceof Error ? `${error.message}${error.cause ? `: ${error.cause}` : ''}` : String(error);
  if (error instanceof Error && error.name === 'AbortError' || /timeout|timed out/iu.test(detail)) {
    return { kind: 'timeout', detail };
  }
  // StarlingMonkey's fetch rejects every wasi:http error code (a denied authority, a refused
  // connection, a failed DNS lookup) with this one message: the kind cannot be told, so the
  // call fails retryably and the message says what is known.
  if (/^NetworkError/u.test(detail)) {
    return { kind: 'other', detail: `${detail} (not granted, unreachable or refused: the component's fetch does not say which)` };
  }
  if (/denied/iu.test(detail)) {
    return { kind: 'denied', detail };
  }
  if (/dns|connect|refused|reset|unreachable/iu.test(detail)) {
    return { kind: 'connect', detail };
  }
  if (/header/iu.test(detail)) {
    return { kind: 'invalid-header', detail };
  }
  return { kind: 'other', detail };
}
