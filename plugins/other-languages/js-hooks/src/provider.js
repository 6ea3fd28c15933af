// js-hooks: a lifecycle-hooks provider that lets every transition go on, except the one hook
// point its config names, which it holds once (hold-once.js says how "once" is decided).
//
//     {"holdOnce": {"hook": "before-cluster-upgrade", "seconds": 5}}
//
// A held call answers `hold` with the time left as its hint, or, with `"answer":
// "retry-after"`, a retryable `unavailable` error with that time as its `retry-after`.

import {
  ErrorCode, HOOKS, HookResponse, InProgress, ProviderError, defineProvider, log,
} from './sdk.js';
import { holdWindow } from './hold-once.js';

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
        answer: {
          description: 'How a held call answers: `hold` (in-progress, with the time left as its hint), or `retry-after` (a retryable `unavailable` error with the time left as its retry-after).',
          enum: ['hold', 'retry-after'],
          default: 'hold',
        },
      },
    },
  },
});

/**
 * @typedef {object} Config
 * @property {import('./hold-once.js').HoldOnce} [holdOnce]
 */

/**
 * The provider, reading the wall clock through `now` (Unix epoch milliseconds).
 * @param {{now?: () => number}} [options]
 */
export function hooksProvider({ now = Date.now } = {}) {
  return defineProvider({
    name: 'js-hooks',
    version: '0.1.0',
    description: 'Lifecycle hooks in JavaScript: every transition proceeds, one hook point can be held once.',
    configSchema: CONFIG_SCHEMA,
    lifecycleHooks: {
      /**
       * @param {import('./sdk.js').Context<Config>} ctx
       * @param {import('./sdk.js').HookRequest} request
       */
      handle(ctx, request) {
        const rule = ctx.config.holdOnce;
        if (rule === undefined || rule.hook !== request.hook) {
          return HookResponse.proceed;
        }
        const held = holdWindow(rule, ctx.idempotencyKey, now());
        const fields = { hook: request.hook, to: String(request.toVersion), key: ctx.idempotencyKey };
        if (held === undefined) {
          log.info('hook proceeds: outside its hold window', fields);
          return HookResponse.proceed;
        }
        const until = new Date(held.untilMs).toISOString();
        const message = `${request.hook} to ${request.toVersion} held once, until ${until}`;
        log.info('hook held once', { ...fields, until });
        if (rule.answer === 'retry-after') {
          throw ProviderError.retryable(ErrorCode.Unavailable, message).retryAfter(held.remainingMs);
        }
        return HookResponse.hold(new InProgress('HeldOnce', message).requeueAfter(held.remainingMs));
      },
    },
  });
}

/** The provider the component exports. */
export const provider = hooksProvider();
