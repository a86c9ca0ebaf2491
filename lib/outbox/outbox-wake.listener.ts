import type { Pool } from 'pg';
import type { PgModule } from '../peers/optional-peer.loader.js';
import { OutboxNotifyListener } from './outbox-notify.listener.js';

/** Future wake-ups this process remembers (jobs given back or written for later); past that, polling finds them. */
const MAX_TIMED_WAKES = 1000;

/**
 * When the outbox's fetch loop looks for jobs: a commit that wrote one (a NOTIFY heard on a `LISTEN` connection
 * of its own, delivered at commit and never after a rollback), a job given back or written for later falling due
 * (a timer), a last fetch that was full (`more`), and otherwise every `pollingIntervalMs` (the fallback). Several
 * reasons while the loop is busy make one look; the loop sleeps until the next. Without a connection to listen on
 * (a pooler in transaction mode and no `listenConnection`), it polls.
 */
export class OutboxWakes {
  /** The last fetch filled the room it had: there may be more. */
  more = true;
  /** A notification (or a due time) came since the last fetch began. */
  private dirty = false;
  private nextPollAt = 0;
  private wakeUp?: () => void;
  private readonly timed: number[] = [];
  private timer?: NodeJS.Timeout;
  /** None where the worker only polls (a pooler in transaction mode and no `listenConnection`). */
  private readonly listener?: OutboxNotifyListener;
  private running = true;
  /** Notifications heard (for benchmarks and specs). */
  notifications = 0;

  constructor(
    pg: PgModule,
    connection: string | Pool | undefined,
    channel: string,
    private readonly pollingIntervalMs: number,
    onTrouble: (message: string) => void,
  ) {
    if (connection === undefined) return;
    this.listener = new OutboxNotifyListener(
      pg,
      connection,
      channel,
      (p) => this.notified(p),
      () => this.poke(),
      onTrouble,
    );
    this.listener.start();
  }

  /** True while the loop hears commits at once (its LISTEN connection is up). */
  get listening(): boolean {
    return this.listener?.listening ?? false;
  }

  /** Whether the loop has a reason to look now. */
  wants(now: number): boolean {
    if (now >= this.nextPollAt) this.dirty = true;
    return this.more || this.dirty;
  }

  /** The loop looks now: the reasons so far are served, the next poll is due a polling interval later. */
  looked(now: number): void {
    this.dirty = false;
    this.nextPollAt = now + this.pollingIntervalMs;
  }

  /** Ms until the next poll is due. */
  untilPoll(now: number): number {
    return this.nextPollAt - now;
  }

  /** Look for jobs now (the loop, if asleep, wakes). */
  poke(): void {
    this.dirty = true;
    this.wake();
  }

  /** Wakes the loop without a reason of its own (a slot freed: it may fetch again). */
  wake(): void {
    this.wakeUp?.();
  }

  /** Looks for jobs at `atMs` (a job given back or written for later falls due). */
  at(atMs: number): void {
    if (!this.running) return;
    const wakes = this.timed;
    if (wakes.length >= MAX_TIMED_WAKES && atMs >= (wakes[wakes.length - 1] as number)) return;
    let i = wakes.length;
    while (i > 0 && (wakes[i - 1] as number) > atMs) i--;
    wakes.splice(i, 0, atMs);
    if (wakes.length > MAX_TIMED_WAKES) wakes.pop();
    if (i === 0) this.arm();
  }

  /** Waits up to `ms`, less when woken (a notification, a slot that frees, a due job) or once closed. */
  async sleep(ms: number): Promise<void> {
    if (!this.running) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, Math.max(0, ms));
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wakeUp = done;
    });
    this.wakeUp = undefined;
  }

  /** Stops waking (and the LISTEN connection); a sleep under way ends. */
  async close(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    this.wake();
    await this.listener?.close();
  }

  /** A commit wrote a job (payload empty) or a job due at a later time (payload: its time in ms). */
  private notified(payload: string): void {
    this.notifications++;
    const at = payload === '' ? NaN : Number(payload);
    if (Number.isFinite(at) && at > Date.now()) return this.at(at);
    this.poke();
  }

  private arm(): void {
    clearTimeout(this.timer);
    const next = this.timed[0];
    if (next === undefined || !this.running) return;
    // pg-boss compares start_after with the database's clock: a few ms later, so that the job is due there too.
    this.timer = setTimeout(
      () => {
        const now = Date.now();
        while (this.timed.length > 0 && (this.timed[0] as number) <= now) this.timed.shift();
        this.poke();
        this.arm();
      },
      Math.max(0, next - Date.now()) + 5,
    );
    this.timer.unref?.();
  }
}
