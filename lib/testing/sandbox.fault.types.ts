/**
 * The contract operations faults can target, as `METHOD /path`.
 * @publicApi
 */
export type SandboxRoute =
  'POST /emails' | 'POST /emails/batch' | 'GET /emails' | 'GET /emails/:id' | 'GET /emails/:id/events';

/**
 * What goes wrong with a request.
 * - `delay`: wait `ms` before processing (`at: 'before'`) or after processing, before answering (`'after'`;
 *   an idempotency key stays in flight meanwhile).
 * - `hang`: like delay, but never answers; the request ends when the client gives up.
 * - `status`: answer 409/429/500/502/503 with `{ error }` without processing anything.
 * - `drop-before`: reset the connection without processing (nothing created).
 * - `drop-after`: process, then reset the connection with no answer (created, answer lost).
 * - `fail-after`: process, then answer 500 (or the given status) instead of the result.
 * @publicApi
 */
export type SandboxFault =
  | { mode: 'delay'; ms: number; at?: 'before' | 'after' }
  | { mode: 'hang'; at?: 'before' | 'after' }
  | { mode: 'status'; status: 409 | 429 | 500 | 502 | 503; error?: string; retryAfter?: number }
  | { mode: 'drop-before' }
  | { mode: 'drop-after' }
  | { mode: 'fail-after'; status?: 409 | 500 | 502 | 503; error?: string };

/**
 * Name of a fault mode.
 * @publicApi
 */
export type SandboxFaultMode = SandboxFault['mode'];

/**
 * Which requests a scripted fault hits.
 * @publicApi
 */
export interface SandboxFaultTarget {
  /** @default '*' (every contract route) */
  route?: SandboxRoute | SandboxRoute[] | '*';
  /** How many matching requests it hits; `Infinity` for all. @default 1 */
  times?: number;
  /** Matching requests to let through before the first hit. @default 0 */
  skip?: number;
}

/**
 * A scripted fault.
 *
 * @example
 * sandbox.faults.add({ route: 'POST /emails', mode: 'status', status: 503, times: 2 });
 * @publicApi
 */
export type SandboxFaultRule = SandboxFault & SandboxFaultTarget;

/**
 * Random faults with a fixed seed.
 *
 * @example
 * sandbox.faults.random({ probability: 0.2, seed: 42, modes: ['status', 'drop-after'] });
 * @publicApi
 */
export interface SandboxRandomFaults {
  /** Chance (0 to 1) that a request gets a fault. */
  probability: number;
  /** @default 1 */
  seed?: number;
  /** Bare names use defaults (`status` picks 500, 502 or 503; `delay` waits 100 ms).
   * @default ['delay', 'status', 'drop-before', 'drop-after', 'fail-after'] */
  modes?: Array<SandboxFault | SandboxFaultMode>;
  /** @default '*' */
  routes?: SandboxRoute[] | '*';
}

/**
 * A live scripted fault.
 * @publicApi
 */
export interface SandboxFaultHandle {
  /** Requests it has hit so far. */
  readonly hits: number;
  /** Hits left. */
  readonly remaining: number;
  /** Takes it out early. */
  remove(): void;
}
