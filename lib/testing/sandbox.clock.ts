/**
 * How the sandbox clock starts.
 * @publicApi
 */
export interface SandboxClockOptions {
  /** Time the clock shows at start. @default the real time */
  start?: Date | string | number;
  /** A frozen clock only moves through `advance` and `set`. @default false */
  frozen?: boolean;
}

/** Converts a Date, ISO string or epoch milliseconds to epoch milliseconds (throws on junk). */
export function toEpochMs(value: Date | string | number): number {
  const ms = value instanceof Date ? value.getTime() : typeof value === 'number' ? value : Date.parse(value);
  if (!Number.isFinite(ms)) throw new TypeError(`not a valid time: ${String(value)}`);
  return ms;
}

/**
 * The sandbox's notion of "now". It follows the real time, shifted by whatever tests moved it
 * (or stands still when frozen). Moving it makes due scheduled messages `sent`.
 *
 * @example
 * sandbox.clock.advance(60 * 60 * 1000); // one hour later: messages scheduled before then are sent
 * @publicApi
 */
export class SandboxClock {
  private offset = 0;
  private frozenAt: number | null = null;
  private readonly listeners: Array<(now: number) => void> = [];

  constructor(private readonly options: SandboxClockOptions = {}) {
    this.restart();
  }

  /** Current sandbox time in epoch milliseconds. */
  now(): number {
    return this.frozenAt ?? Date.now() + this.offset;
  }

  /** Current sandbox time as a Date. */
  date(): Date {
    return new Date(this.now());
  }

  /** Moves the clock forward by `ms` milliseconds (negative moves it back). */
  advance(ms: number): void {
    if (!Number.isFinite(ms)) throw new TypeError('advance(ms) needs a finite number');
    if (this.frozenAt !== null) this.frozenAt += ms;
    else this.offset += ms;
    this.changed();
  }

  /** Sets the clock to a given time (it keeps running from there unless frozen). */
  set(time: Date | string | number): void {
    const target = toEpochMs(time);
    if (this.frozenAt !== null) this.frozenAt = target;
    else this.offset = target - Date.now();
    this.changed();
  }

  /** Stops the clock at its current time. */
  freeze(): void {
    this.frozenAt = this.now();
  }

  /** Lets a frozen clock run again from the time it shows. */
  unfreeze(): void {
    if (this.frozenAt === null) return;
    this.offset = this.frozenAt - Date.now();
    this.frozenAt = null;
  }

  /** Back to the state given at start. */
  restart(): void {
    const start = this.options.start === undefined ? Date.now() : toEpochMs(this.options.start);
    this.offset = start - Date.now();
    this.frozenAt = this.options.frozen ? start : null;
  }

  /** @internal called whenever the clock is moved. */
  onChange(listener: (now: number) => void): void {
    this.listeners.push(listener);
  }

  private changed(): void {
    const now = this.now();
    for (const listener of this.listeners) listener(now);
  }
}
