import type {
  SandboxFault,
  SandboxFaultHandle,
  SandboxFaultMode,
  SandboxFaultRule,
  SandboxFaultTarget,
  SandboxRandomFaults,
  SandboxRoute,
} from './sandbox.fault.types.js';
import { seededRandom } from './sandbox.random.js';

/**
 * A scripted fault as `active()` lists it: the fault, the routes it targets and its counters.
 * @publicApi
 */
export type SandboxActiveFault = SandboxFault & {
  route: SandboxRoute[] | '*';
  hits: number;
  remaining: number;
};

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
 * @publicApi
 */
export class SandboxFaults {
  private rules: LiveRule[] = [];
  private chaos: { p: number; next: () => number; modes: Array<SandboxFault | SandboxFaultMode> } | null =
    null;
  private chaosOptions: SandboxRandomFaults | null = null;
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
      this.chaosOptions = null;
      return;
    }
    if (!(options.probability >= 0 && options.probability <= 1)) {
      throw new RangeError('probability is 0 to 1');
    }
    const modes = options.modes?.length ? options.modes : DEFAULT_MODES;
    this.chaos = { p: options.probability, next: seededRandom(options.seed ?? 1), modes };
    this.chaosRoutes = routeSet(options.routes);
    this.chaosOptions = { ...options, modes };
  }

  /** The scripted faults still waiting to hit (with their counters) and the random-fault settings, if on. */
  active(): { rules: SandboxActiveFault[]; random: SandboxRandomFaults | null } {
    const rules = this.rules
      .filter((r) => r.remaining > 0)
      .map((r) => ({
        ...r.fault,
        route: r.routes ? [...r.routes] : '*',
        hits: r.hits,
        remaining: r.remaining,
      }));
    return { rules: rules as SandboxActiveFault[], random: this.chaosOptions && { ...this.chaosOptions } };
  }

  /** Removes every scripted and random fault (the counters stay). */
  clear(): void {
    this.rules = [];
    this.chaos = null;
    this.chaosOptions = null;
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
