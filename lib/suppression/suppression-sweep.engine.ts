import { SWEEP_MIN_MS } from '../config/suppression.options.js';
import type { SuppressionGate } from './suppression.engine.js';

/** How long before its interval ends a process may take an account's next sweep (timers drift). */
const CLAIM_SLACK_MS = 1_000;

/**
 * The optional sweep (`suppression.sweep`): every `everyMs`, each account's latest records are read once
 * (`read`: `EmailService.list` with the service's largest page, which learns from what it reads), by one
 * process of all those sharing the store (a claim per account and interval). The list request goes through
 * the `rateLimit` budgets like any other, and one per account and interval (at least 10 s) is all it asks.
 * It sees at most the 100 records the service lists (the contract shows neither their order nor paging):
 * a bounce among older records is learned only when the app reads that record.
 */
export class SuppressionSweep {
  private timer?: NodeJS.Timeout;
  private running = false;
  /** Rounds run, and reads that failed (for specs and health). */
  rounds = 0;
  failures = 0;

  constructor(
    private readonly gate: SuppressionGate,
    private readonly read: (account: string | undefined) => Promise<unknown>,
    /** Whether the module has an account of its own (an `apiKey`). */
    private readonly hasOwn: boolean,
  ) {}

  /** A first round now (what bounced while the app was down is learned at boot), then one per interval. */
  start(): void {
    const sweep = this.gate.options.sweep;
    if (sweep === undefined || this.timer !== undefined) return;
    this.timer = setInterval(() => void this.round(), Math.max(sweep.everyMs, SWEEP_MIN_MS));
    this.timer.unref?.();
    this.first = this.round();
  }

  /** The first round, for whoever must know it ended (specs). */
  first?: Promise<void>;

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One pass over the accounts, one after the other. */
  async round(): Promise<void> {
    const sweep = this.gate.options.sweep;
    if (sweep === undefined || this.running) return;
    this.running = true;
    try {
      const given = typeof sweep.accounts === 'function' ? await sweep.accounts() : sweep.accounts;
      const accounts: Array<string | undefined> = [
        ...(this.hasOwn ? [undefined] : []),
        ...(given ?? this.gate.accountsSeen ?? []),
      ];
      for (const account of new Set(accounts)) {
        const list = this.gate.listOf(account);
        if (!(await this.gate.claim(`sweep:${list}`, sweep.everyMs - CLAIM_SLACK_MS).catch(() => false)))
          continue;
        await this.read(account).catch(() => this.failures++);
      }
      this.rounds++;
    } catch {
      this.failures++;
    } finally {
      this.running = false;
    }
  }
}
