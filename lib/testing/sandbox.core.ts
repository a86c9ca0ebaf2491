import { SandboxClock } from './sandbox.clock.js';
import { SandboxExtras } from './sandbox.extras.js';
import { SandboxFaults } from './sandbox.faults.js';
import { SandboxIdempotency } from './sandbox.idempotency.js';
import { SandboxLimiter } from './sandbox.limits.js';
import {
  resolveKeys,
  SAMPLE_TEMPLATE,
  type ResolvedSandboxKey,
  type SandboxOptions,
} from './sandbox.options.js';
import { SandboxRequestLog } from './sandbox.requests.js';
import { SandboxStore } from './sandbox.store.js';
import { SandboxTemplates } from './sandbox.templates.js';

/**
 * Everything one mailbox of a running sandbox holds (keys, messages, idempotency, quota, faults,
 * clock), with the options resolved. The HTTP layer and the operations share it; tests reach it
 * through `EmailSandbox` (the default mailbox) and `SandboxMailbox`.
 */
export class SandboxCore {
  readonly keys: ReadonlyMap<string, ResolvedSandboxKey>;
  readonly primaryKey: string;
  readonly clock: SandboxClock;
  readonly store: SandboxStore;
  readonly idempotency: SandboxIdempotency;
  readonly quota: SandboxLimiter | null;
  readonly rate: SandboxLimiter | null;
  readonly templates: SandboxTemplates;
  readonly faults = new SandboxFaults();
  /** Template, variables and attachments of each message, for the outbox page. */
  readonly extras = new SandboxExtras();
  readonly requests: SandboxRequestLog;
  readonly rejectUnknown: boolean;
  readonly skipInvalidBatchItems: boolean;
  readonly allowSubdomains: boolean;
  readonly maxBodyBytes: number;
  readonly basePath: string;
  readonly admin: boolean;
  /** Absolute URL prefix of tracking links; known once the server listens. */
  trackingBase = '';

  constructor(
    options: SandboxOptions = {},
    /** The mailbox this core is: `'default'` for the sandbox's own, or the name given to `mailbox()`. */
    readonly name = 'default',
  ) {
    const keys = resolveKeys(options);
    this.keys = new Map(keys.map((k) => [k.key, k]));
    this.primaryKey = keys[0].key;
    this.clock = new SandboxClock(options.clock);
    this.store = new SandboxStore(positive(options.maxMessages, 100_000, 'maxMessages'));
    this.idempotency = new SandboxIdempotency(
      positive(options.idempotencyTtlMs, 86_400_000, 'idempotencyTtlMs'),
    );
    const q = options.quota;
    this.quota = q
      ? new SandboxLimiter(q.recipients, positive(q.windowMs, 60_000, 'quota.windowMs'), 'recipient quota')
      : null;
    const r = options.rateLimit;
    this.rate = r
      ? new SandboxLimiter(r.requests, positive(r.windowMs, 1000, 'rateLimit.windowMs'), 'request rate')
      : null;
    this.templates = new SandboxTemplates(options.templates ?? { 1: SAMPLE_TEMPLATE });
    this.requests = new SandboxRequestLog(options.maxRequestLog ?? 1000);
    this.rejectUnknown = (options.unknownFields ?? 'reject') === 'reject';
    this.skipInvalidBatchItems = options.batchInvalidItem === 'skip-item';
    this.allowSubdomains = options.allowSubdomains ?? false;
    this.maxBodyBytes = positive(options.maxBodyBytes, 10 * 1024 * 1024, 'maxBodyBytes');
    this.basePath = (options.basePath ?? '').replace(/\/+$/, '');
    if (this.basePath && !this.basePath.startsWith('/')) throw new TypeError('basePath must start with "/"');
    this.admin = options.admin ?? true;
    this.clock.onChange((now) => this.store.flushDue(now));
  }

  /** 429s answered so far by the recipient quota and by the request rate limit (not injected faults). */
  limited(): SandboxLimitCounts {
    return { quota: this.quota?.refused ?? 0, rate: this.rate?.refused ?? 0 };
  }

  /** Current sandbox time after promoting due scheduled messages. */
  tick(): number {
    const now = this.clock.now();
    this.store.flushDue(now);
    return now;
  }

  /** Clears messages, keys in use, windows, requests and faults; the clock goes back to its start. */
  reset(): void {
    this.store.clear();
    this.extras.clear();
    this.idempotency.clear();
    this.quota?.clear();
    this.rate?.clear();
    this.requests.clear();
    this.faults.clear();
    this.faults.resetCounts();
    this.clock.restart();
  }
}

/**
 * How many requests the sandbox's own limits answered 429 (`quota`, `rateLimit`); injected faults are
 * counted apart (`faults.injected`).
 * @publicApi
 */
export interface SandboxLimitCounts {
  readonly quota: number;
  readonly rate: number;
}

function positive(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!(value > 0)) throw new TypeError(`${name} must be a positive number`);
  return value;
}
