import { seededRandom } from './sandbox.random.js';

/** The contract operations faults can target, as `METHOD /path`. */
export type SandboxRoute =
  | 'POST /emails'
  | 'POST /emails/batch'
  | 'GET /emails'
  | 'GET /emails/:id'
  | 'GET /emails/:id/events';

/**
 * What goes wrong with a request.
 * - `delay`: wait `ms` before processing (`at: 'before'`) or after processing, before answering (`'after'`;
 *   an idempotency key stays in flight meanwhile).
 * - `hang`: like delay, but never answers; the request ends when the client gives up.
 * - `status`: answer 429/500/502/503 with `{ error }` without processing anything.
 * - `drop-before`: reset the connection without processing (nothing created).
 * - `drop-after`: process, then reset the connection with no answer (created, answer lost).
 * - `fail-after`: process, then answer 500 (or the given status) instead of the result.
 */
export type SandboxFault =
  | { mode: 'delay'; ms: number; at?: 'before' | 'after' }
  | { mode: 'hang'; at?: 'before' | 'after' }
  | { mode: 'status'; status: 429 | 500 | 502 | 503; error?: string; retryAfter?: number }
  | { mode: 'drop-before' }
  | { mode: 'drop-after' }
  | { mode: 'fail-after'; status?: 500 | 502 | 503; error?: string };

/** Name of a fault mode. */
export type SandboxFaultMode = SandboxFault['mode'];

/** Which requests a scripted fault hits. */
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
 */
export type SandboxFaultRule = SandboxFault & SandboxFaultTarget;

/**
 * Random faults with a fixed seed.
 *
 * @example
 * sandbox.faults.random({ probability: 0.2, seed: 42, modes: ['status', 'drop-after'] });
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

/** A live scripted fault. */
export interface SandboxFaultHandle {
  /** Requests it has hit so far. */
  readonly hits: number;
  /** Hits left. */
  readonly remaining: number;
  /** Takes it out early. */
  remove(): void;
}

interface LiveRule {
  fault: SandboxFault;
  routes: ReadonlySet<string> | null;
  skip: number;
  remaining: number;
  hits: number;
}

const DEFAULT_MODES: SandboxFaultMode[] = ['delay', 'status', 'drop-before', 'drop-after', 'fail-after'];

function stripTarget(rule: SandboxFaultRule): SandboxFault {
  const { route: _r, times: _t, skip: _s, ...fault } = rule;
  return fault as SandboxFault;
}

const routeSet = (r: SandboxFaultTarget['route'] | SandboxRoute[]): ReadonlySet<string> | null =>
  r === undefined || r === '*' ? null : new Set(Array.isArray(r) ? r : [r]);

/**
 * Fault injection of a sandbox: scripted rules first (in the order added), then seeded random faults.
 * `injected` counts every fault applied.
 */
export class SandboxFaults {
  private rules: LiveRule[] = [];
  private chaos: { p: number; next: () => number; modes: Array<SandboxFault | SandboxFaultMode> } | null = null;
  private chaosRoutes: ReadonlySet<string> | null = null;
  private readonly perMode = new Map<SandboxFaultMode, number>();
  private total = 0;

  /** Adds a scripted fault; see `SandboxFaultRule`. */
  add(rule: SandboxFaultRule): SandboxFaultHandle {
    const live: LiveRule = {
      fault: stripTarget(rule),
      routes: routeSet(rule.route),
      skip: rule.skip ?? 0,
      remaining: rule.times ?? 1,
      hits: 0,
    };
    this.rules.push(live);
    return {
      get hits() {
        return live.hits;
      },
      get remaining() {
        return live.remaining;
      },
      remove: () => {
        this.rules = this.rules.filter((r) => r !== live);
      },
    };
  }

  /** Turns seeded random faults on (or off with `null`). */
  random(options: SandboxRandomFaults | null): void {
    if (!options) {
      this.chaos = null;
      return;
    }
    if (!(options.probability >= 0 && options.probability <= 1)) throw new RangeError('probability is 0 to 1');
    const modes = options.modes?.length ? options.modes : DEFAULT_MODES;
    this.chaos = { p: options.probability, next: seededRandom(options.seed ?? 1), modes };
    this.chaosRoutes = routeSet(options.routes);
  }

  /** Removes every scripted and random fault (the counters stay). */
  clear(): void {
    this.rules = [];
    this.chaos = null;
  }

  /** Faults applied since start or the last `resetCounts()`. */
  get injected(): number {
    return this.total;
  }

  /** Faults applied, per mode. */
  counts(): Partial<Record<SandboxFaultMode, number>> {
    return Object.fromEntries(this.perMode);
  }

  /** Sets the counters back to zero. */
  resetCounts(): void {
    this.total = 0;
    this.perMode.clear();
  }

  /** @internal The fault for this request, if any (and counts it). */
  pick(route: SandboxRoute): SandboxFault | null {
    const fault = this.pickScripted(route) ?? this.pickRandom(route);
    if (fault) {
      this.total++;
      this.perMode.set(fault.mode, (this.perMode.get(fault.mode) ?? 0) + 1);
    }
    return fault;
  }

  private pickScripted(route: SandboxRoute): SandboxFault | null {
    for (const rule of this.rules) {
      if (rule.remaining <= 0 || (rule.routes && !rule.routes.has(route))) continue;
      if (rule.skip > 0) {
        rule.skip--;
        continue;
      }
      rule.remaining--;
      rule.hits++;
      if (rule.remaining <= 0) this.rules = this.rules.filter((r) => r !== rule);
      return rule.fault;
    }
    return null;
  }

  private pickRandom(route: SandboxRoute): SandboxFault | null {
    const c = this.chaos;
    if (!c || (this.chaosRoutes && !this.chaosRoutes.has(route)) || c.next() >= c.p) return null;
    const choice = c.modes[Math.floor(c.next() * c.modes.length)];
    if (typeof choice !== 'string') return choice;
    switch (choice) {
      case 'delay':
        return { mode: 'delay', ms: 100 };
      case 'hang':
        return { mode: 'hang' };
      case 'status':
        return { mode: 'status', status: ([500, 502, 503] as const)[Math.floor(c.next() * 3)] };
      default:
        return { mode: choice };
    }
  }
}
