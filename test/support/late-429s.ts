/**
 * How many 429s a client rate limit may still draw from the sandbox's quota in a spec: on a busy machine a
 * request let through near the end of one of the limiter's windows can reach the service (the sandbox, in
 * the spec's own busy process) after the service's window ended. A limiter that is missing, or not shared
 * by the processes that send, draws many times this; "none at all", which a quiet machine gives, is
 * measured by `npm run bench:rate` (docs/rate-limits.md). Specs that allow them let the send retry (the
 * client pauses for the 429's Retry-After), so every email still goes.
 */
export const LATE_429S = 2;
