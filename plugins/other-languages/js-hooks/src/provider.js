// js-hooks: a lifecycle-hooks provider that lets every transition go on, except the one hook
// point its config names, which it holds once (hold-once.js says how "once" is decided), or
// holds until a time (a maintenance window that opens then):
//
//     {"holdOnce": {"hook": "before-cluster-upgrade", "seconds": 5}}
//     {"holdUntil": {"hook": "before-cluster-upgrade", "at": "2026-12-24T06:00:00Z"}}
//
// A held call answers `hold` with the time left as its hint, or, with `"answer":
// "retry-after"`, a retryable `unavailable` error with that time as its `retry-after`.

import {
  ErrorCode, HOOKS, HookResponse, InProgress, ProviderError, defineProvider, fieldError, log,
} from './sdk.js';
import { holdWindow } from './hold-once.js';

/** How a held call answers, for both rules. */
const ANSWER = Object.freeze({
  description: 'How a held call answers: `hold` (in-progress, with the time left as its hint), or `retry-after` (a retryable `unavailable` error with the time left as its retry-after).',
  enum: ['hold', 'retry-after'],
  default: 'hold',
});

/** An RFC 3339 time in UTC, to the second or finer. */
const UTC_TIME = '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]{1,9})?Z$';

/** The config schema: `describe` publishes it, and every config is checked against it. */
export const CONFIG_SCHEMA = Object.freeze({
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  title: 'Config',
  type: 'object',
  additionalProperties: false,
  properties: {
    holdOnce: {
      description: 'Hold one hook point once per transition; without it every hook proceeds.',
      type: 'object',
      additionalProperties: false,
      required: ['hook'],
      properties: {
        hook: { description: 'The hook point held.', enum: HOOKS },
        seconds: {
          description: 'The hold window: the longest a transition is held.',
          type: 'integer', minimum: 1, maximum: 3600, default: 5,
        },
        proceedSeconds: {
          description: 'The proceed window after the hold window; default: `seconds`. A host that calls back later than this after the hint is held again.',
          type: 'integer', minimum: 1, maximum: 3600,
        },
        answer: ANSWER,
      },
    },
    holdUntil: {
      description: 'Hold one hook point of every transition until a time (a maintenance window that opens then); every call after it proceeds.',
      type: 'object',
      additionalProperties: false,
      required: ['hook', 'at'],
      properties: {
        hook: { description: 'The hook point held.', enum: HOOKS },
        at: { description: 'When the hold ends: an RFC 3339 time in UTC, e.g. 2026-12-24T06:00:00Z.', type: 'string', pattern: UTC_TIME },
        answer: ANSWER,
      },
    },
  },
});

/**
 * The rules the schema cannot say: a real calendar time, one rule at most.
 * @param {Config} config
 */
function validate(config) {
  const errors = [];
  if (config.holdUntil !== undefined && Number.isNaN(Date.parse(config.holdUntil.at))) {
    errors.push(fieldError('/holdUntil/at', 'must be a real time, such as 2026-12-24T06:00:00Z'));
  }
  if (config.holdOnce !== undefined && config.holdUntil !== undefined) {
    errors.push(fieldError('/holdUntil', 'give holdOnce or holdUntil, not both'));
  }
  return errors;
}

/**
 * The answer of a held call: a hold with the time left as its hint, or the retryable error.
 * @param {'hold' | 'retry-after'} answer
 * @param {string} reason
 * @param {string} message
 * @param {number} remainingMs
 */
function held(answer, reason, message, remainingMs) {
  // The contract's hints are u32 milliseconds: a hold ending further away is asked again sooner.
  remainingMs = Math.min(remainingMs, 0xffff_ffff);
  if (answer === 'retry-after') {
    throw ProviderError.retryable(ErrorCode.Unavailable, message).retryAfter(remainingMs);
  }
  return HookResponse.hold(new InProgress(reason, message).requeueAfter(remainingMs));
}

/**
 * @typedef {object} HoldUntil
 * @property {string} hook
 * @property {string} at
 * @property {'hold' | 'retry-after'} answer
 *
 * @typedef {object} Config
 * @property {import('./hold-once.js').HoldOnce} [holdOnce]
 * @property {HoldUntil} [holdUntil]
 */

/**
 * The provider, reading the wall clock through `now` (Unix epoch milliseconds).
 * @param {{now?: () => number}} [options]
 */
export function hooksProvider({ now = Date.now } = {}) {
  return defineProvider({
    name: 'js-hooks',
    version: '0.1.0',
    description: 'Lifecycle hooks in JavaScript: every transition proceeds, one hook point can be held once or until a time.',
    configSchema: CONFIG_SCHEMA,
    validate,
    lifecycleHooks: {
      /**
       * @param {import('./sdk.js').Context<Config>} ctx
       * @param {import('./sdk.js').HookRequest} request
       */
      handle(ctx, request) {
        const fields = { hook: request.hook, to: String(request.toVersion), key: ctx.idempotencyKey };
        const until = ctx.config.holdUntil;
        if (until !== undefined && until.hook === request.hook) {
          const remainingMs = Date.parse(until.at) - now();
          if (remainingMs <= 0) {
            log.info('hook proceeds: its hold has ended', { ...fields, until: until.at });
            return HookResponse.proceed;
          }
          log.info('hook held until', { ...fields, until: until.at });
          return held(until.answer, 'HeldUntil', `${request.hook} to ${request.toVersion} held until ${until.at}`, remainingMs);
        }
        const rule = ctx.config.holdOnce;
        if (rule === undefined || rule.hook !== request.hook) {
          return HookResponse.proceed;
        }
        const window = holdWindow(rule, ctx.idempotencyKey, now());
        if (window === undefined) {
          log.info('hook proceeds: outside its hold window', fields);
          return HookResponse.proceed;
        }
        const end = new Date(window.untilMs).toISOString();
        log.info('hook held once', { ...fields, until: end });
        return held(rule.answer, 'HeldOnce', `${request.hook} to ${request.toVersion} held once, until ${end}`, window.remainingMs);
      },
    },
  });
}

/** The provider the component exports. */
export const provider = hooksProvider();
