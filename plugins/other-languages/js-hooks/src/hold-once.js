// When a transition is held: the decision of `holdOnce`, from the call's idempotency key and
// the wall clock alone.
//
// A provider is stateless and contract 0.3 passes nothing back to a hook: every call of one
// transition carries the same request and the same idempotency key (the host builds it from
// the Cluster's uid, the hook and the target version), and the answer of the last call is not
// among its input. The clock is the only input that differs between the first call and the
// ones after a hold, so "once" is decided on it:
//
// - The clock is cut into cycles of `seconds + proceedSeconds`: a hold window of `seconds`,
//   then a proceed window of `proceedSeconds`. The key sets where the cycles start (a hash of
//   it, modulo the cycle), so one transition keeps its windows across calls and host restarts,
//   and transitions of other clusters do not hold in lockstep.
// - A call inside the hold window holds until that window ends, and says so as its hint. Every
//   call of the window (a sooner call included) names the same end, so the transition is held
//   once, for at most `seconds`; the host's call after the hint lands in the proceed window and
//   the hook proceeds, passing the hook point for good.
// - A call in the proceed window proceeds at once: a transition whose first call comes there is
//   not held at all. With the default `proceedSeconds` (= `seconds`) that is one transition in
//   two; a shorter proceed window holds more of them, but a host that calls back later than
//   `proceedSeconds` after the hint meets the next hold window and is held a second time.

/**
 * @typedef {object} HoldOnce The `holdOnce` of the config.
 * @property {string} hook The hook point held.
 * @property {number} seconds Length of the hold window, and the longest hold.
 * @property {number} [proceedSeconds] Length of the proceed window after it; default `seconds`.
 * @property {'hold' | 'retry-after'} answer How a held call answers.
 */

/**
 * FNV-1a, 32 bits: a stable spread of keys over the cycle, the same in every engine.
 * @param {string} text
 */
export function fnv1a(text) {
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(text)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/**
 * Whether a call at `nowMs` (Unix epoch milliseconds) of the transition `key` is held, and
 * until when.
 * @param {HoldOnce} rule
 * @param {string} key The call's idempotency key.
 * @param {number} nowMs
 * @returns {{untilMs: number, remainingMs: number} | undefined} `undefined`: proceed.
 */
export function holdWindow(rule, key, nowMs) {
  const holdMs = rule.seconds * 1000;
  const cycleMs = holdMs + (rule.proceedSeconds ?? rule.seconds) * 1000;
  const phase = (nowMs + fnv1a(key)) % cycleMs;
  if (phase >= holdMs) {
    return undefined;
  }
  const remainingMs = holdMs - phase;
  return { untilMs: nowMs + remainingMs, remainingMs };
}
