import { SandboxBounces } from './sandbox.bounces.js';
import { SandboxClock } from './sandbox.clock.js';
import { SandboxExtras } from './sandbox.extras.js';
import { SandboxFaults } from './sandbox.faults.js';
import { SandboxIdempotency } from './sandbox.idempotency.js';
import { SandboxLimiter } from './sandbox.limits.js';
import {
  checkKeyText,
  resolveKeys,
  SAMPLE_TEMPLATE,
  type ResolvedSandboxKey,
  type SandboxIdempotencyScope,
  type SandboxOptions,
} from './sandbox.options.js';
import { SandboxRequestLog } from './sandbox.requests.js';
import { KEPT_BODY_BYTES, SandboxStore } from './sandbox.store.js';
import { SandboxTags } from './sandbox.tags.js';
import { SandboxTemplates } from './sandbox.templates.js';

/**
 * Everything one mailbox of a running sandbox holds (keys, messages, idempotency, quota, faults,
 * clock), with the options resolved. The HTTP layer and the operations share it; tests reach it
 * through `EmailSandbox` (the default mailbox) and `SandboxMailbox`.
 */
export class SandboxCore {
  /** Every key of the mailbox, revoked ones included; changed only through `SandboxRegistry`. */
  readonly keys: ReadonlyMap<string, ResolvedSandboxKey>;
  readonly primaryKey: string;
  /** What an Idempotency-Key is scoped by: the key's account, or the API key itself. */
  readonly idempotencyScope: SandboxIdempotencyScope;
  readonly clock: SandboxClock;
  readonly store: SandboxStore;
  readonly idempotency: SandboxIdempotency;
  readonly quota: SandboxLimiter | null;
  readonly rate: SandboxLimiter | null;
  readonly templates: SandboxTemplates;
  readonly faults = new SandboxFaults();
  /** Addresses whose sent messages read `bounced` or `complained`. */
  readonly bounces = new SandboxBounces();
  /** Template, variables and attachments of each message, for the outbox page. */
  readonly extras = new SandboxExtras();
  /** Tags on messages (`job:<id>`, a test's own labels), shown and searched by the outbox page. */
  readonly tags = new SandboxTags();
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
    this.store = new SandboxStore(
      positive(options.maxMessages, 100_000, 'maxMessages'),
      positive(options.maxKeptBytes, KEPT_BODY_BYTES, 'maxKeptBytes'),
    );
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
    const scope = options.idempotencyScope ?? 'account';
    if (scope !== 'account' && scope !== 'key') throw new TypeError("idempotencyScope is 'account' or 'key'");
    this.idempotencyScope = scope;
    this.clock.onChange((now) => this.store.flushDue(now));
    this.store.onSent = (msg, at) => this.bounces.apply(msg, at);
  }

  /** The scope an Idempotency-Key of a request with this key lives in (see `idempotencyScope`). */
  idempotencyOwner(key: ResolvedSandboxKey): string {
    return this.idempotencyScope === 'key' ? key.key : key.account;
  }

  /**
   * Adds a key that reaches the account of the first key, with its plan, domains and tracking defaults.
   * The registry checks first that no mailbox holds it.
   */
  addKey(key: string): ResolvedSandboxKey {
    checkKeyText(key);
    const first = this.keys.get(this.primaryKey) as ResolvedSandboxKey;
    const added: ResolvedSandboxKey = { ...first, key, revoked: false };
    (this.keys as Map<string, ResolvedSandboxKey>).set(key, added);
    return added;
  }

  /** Marks a key of this mailbox revoked: answered 401 from now on. */
  revokeKey(key: string): void {
    const held = this.keys.get(key);
    if (!held) throw new TypeError(`the ${this.name} mailbox has no such key`);
    held.revoked = true;
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

  /** Clears messages, keys in use, windows, requests, faults and bounces; the clock goes back to its start. */
  reset(): void {
    this.store.clear();
    this.extras.clear();
    this.idempotency.clear();
    this.quota?.clear();
    this.rate?.clear();
    this.requests.clear();
    this.faults.clear();
    this.faults.resetCounts();
    this.bounces.reset();
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
