import { randomBytes } from 'node:crypto';
import type { SandboxClockOptions } from './sandbox.clock.js';

/**
 * Plan of an account. Scheduling needs `'growth'`.
 * @publicApi
 */
export type SandboxPlan = 'free' | 'growth';

/**
 * Account tracking defaults, used when a send leaves `trackOpens` / `trackClicks` out.
 * @publicApi
 */
export interface SandboxTrackingDefaults {
  /** @default false */
  opens?: boolean;
  /** @default false */
  clicks?: boolean;
}

/**
 * One API key the sandbox accepts.
 *
 * @example
 * { key: 'sk_test_free_0001', plan: 'free', domains: ['shop.test'] }
 * @publicApi
 */
export interface SandboxKeyOptions {
  /** The secret clients send as `Authorization: Bearer <key>`. */
  key: string;
  /** Verified domains this key may send from. @default the sandbox-wide `domains` */
  domains?: string[];
  /** @default the sandbox-wide `plan` */
  plan?: SandboxPlan;
  /** Keys with the same account share one message log, quota and idempotency scope. @default the key itself */
  account?: string;
  /** @default the sandbox-wide `tracking` */
  tracking?: SandboxTrackingDefaults;
  /** A revoked key is answered 401. @default false */
  revoked?: boolean;
}

/**
 * What an Idempotency-Key is scoped by, where the contract is silent: `'account'` (keys of one account
 * share it: the same Idempotency-Key sent with another key of the account replays the first message)
 * or `'key'` (each API key has its own: the same Idempotency-Key sent with another key of the account is
 * new and creates a message). The message log and the quota stay the account's either way.
 * @publicApi
 */
export type SandboxIdempotencyScope = 'account' | 'key';

/**
 * A saved template; `{{name}}` placeholders are filled from `variables`.
 * @publicApi
 */
export interface SandboxTemplate {
  subject: string;
  html?: string | null;
  text?: string | null;
}

/**
 * A cap on recipients (not messages) per account and time window.
 * @publicApi
 */
export interface SandboxQuotaOptions {
  recipients: number;
  /** @default 60000 */
  windowMs?: number;
}

/**
 * A cap on authenticated requests per key and time window.
 * @publicApi
 */
export interface SandboxRateLimitOptions {
  requests: number;
  /** @default 1000 */
  windowMs?: number;
}

/**
 * Options of `EmailSandbox.start`. Every field is optional.
 *
 * @example
 * await EmailSandbox.start({ plan: 'free', quota: { recipients: 100 }, clock: { frozen: true } });
 * @publicApi
 */
export interface SandboxOptions {
  /** Port on 127.0.0.1. @default 0 (a free port) */
  port?: number;
  /**
   * A directory where mailboxes and messages are kept across restarts (`sandbox.json`); loaded at
   * start, written as they change and on close. Idempotency keys, quotas, faults and clocks start
   * afresh. @default undefined (nothing kept)
   */
  dataDir?: string;
  /**
   * Whether the listening server keeps Node running. `false` suits a sandbox owned by a test kit: a
   * setup that fails before closing it cannot keep the test runner from exiting. @default true
   */
  ref?: boolean;
  /**
   * Host names (or `name:port`) the sandbox answers besides loopback ones (`127.0.0.1`, `localhost`,
   * `[::1]`), e.g. the name a proxy or a container network reaches it by. Every other `Host` is answered
   * 403 on every route, so that a web page cannot read the mail through a DNS name rebound to 127.0.0.1;
   * a write whose `Origin` is not one of these hosts is refused too. @default [] (loopback only)
   */
  allowedHosts?: string[];
  /** Path prefix of every route, e.g. `'/api'`. @default '' */
  basePath?: string;
  /** Accepted keys; the first is `sandbox.apiKey`. @default one random `sk_test_…` key */
  keys?: Array<string | SandboxKeyOptions>;
  /** Verified domains of keys that name none. @default ['example.com', 'example.test'] */
  domains?: string[];
  /** Also accept subdomains of a verified domain. @default false */
  allowSubdomains?: boolean;
  /** Plan of keys that name none. @default 'growth' */
  plan?: SandboxPlan;
  /** Tracking defaults of keys that name none. @default { opens: false, clicks: false } */
  tracking?: SandboxTrackingDefaults;
  /** Templates by id. @default the sample template 1 (see `SAMPLE_TEMPLATE`) */
  templates?: Record<number, SandboxTemplate>;
  /** Recipient quota. @default null (unlimited) */
  quota?: SandboxQuotaOptions | null;
  /** Request rate limit. @default null (unlimited) */
  rateLimit?: SandboxRateLimitOptions | null;
  /** @default the real time, running */
  clock?: SandboxClockOptions;
  /** Fields the contract does not define: 400, or ignored. @default 'reject' */
  unknownFields?: 'reject' | 'ignore';
  /** A batch with an invalid item: reject it whole, or accept only the valid items. @default 'reject-batch' */
  batchInvalidItem?: 'reject-batch' | 'skip-item';
  /** How long an Idempotency-Key is remembered, in sandbox-clock ms. @default 86400000 (24 h) */
  idempotencyTtlMs?: number;
  /**
   * Whether an Idempotency-Key is scoped per account or per API key (see `SandboxIdempotencyScope`), for
   * this sandbox and, unless they say otherwise, its mailboxes. @default 'account'
   */
  idempotencyScope?: SandboxIdempotencyScope;
  /** Messages kept; the oldest are forgotten past this. @default 100000 */
  maxMessages?: number;
  /**
   * Bytes of body text (html and text, as UTF-8; the html as sent too, when tracking rewrote it) each
   * mailbox keeps across its messages; past this the oldest messages are forgotten, as past `maxMessages`.
   * Attachments have their own bound (32 MiB of contents; their names and sizes stay).
   * @default 268435456 (256 MiB)
   */
  maxKeptBytes?: number;
  /** Requests kept for `requests()`. @default 1000 */
  maxRequestLog?: number;
  /** Largest request body accepted, in bytes. @default 10485760 (10 MiB) */
  maxBodyBytes?: number;
  /**
   * Serve the outbox page (`uiUrl`), `/__sandbox/stats` and `POST /__sandbox/reset` (no auth, not part of the
   * contract; state changes only from the sandbox's own origin). @default true
   */
  admin?: boolean;
}

/**
 * Options of `sandbox.mailbox()`: a mailbox is an account of its own on the same server (its own API
 * key, verified domains, message log with ids from 1, idempotency keys, quota, faults and clock).
 * What is left out comes from the sandbox's options, except `quota`, `rateLimit` and `clock`, which
 * start fresh (no quota, no rate limit, the real time) so that one test's settings never leak into another.
 *
 * @example
 * const mailbox = await sandbox.mailbox({ domains: ['shop.test'], plan: 'free' });
 * @publicApi
 */
export interface SandboxMailboxOptions {
  /** Shown in the outbox page's mailbox switcher and in tracking links. @default 'mailbox-<n>' */
  name?: string;
  /** The key that reaches this mailbox. @default a fresh random `sk_test_…` key */
  apiKey?: string;
  /** Verified sending domains. @default the sandbox's `domains` */
  domains?: string[];
  /** @default the sandbox's `plan` */
  plan?: SandboxPlan;
  /** @default the sandbox's `tracking` */
  tracking?: SandboxTrackingDefaults;
  /** @default the sandbox's `templates` */
  templates?: Record<number, SandboxTemplate>;
  /** @default null (unlimited) */
  quota?: SandboxQuotaOptions | null;
  /** @default null (unlimited) */
  rateLimit?: SandboxRateLimitOptions | null;
  /** This mailbox's own clock. @default the real time, running */
  clock?: SandboxClockOptions;
  /** @default the sandbox's `maxMessages` */
  maxMessages?: number;
  /** Idempotency-Keys per account or per API key (see `SandboxIdempotencyScope`). @default the sandbox's */
  idempotencyScope?: SandboxIdempotencyScope;
}

/** A key with every default applied. */
export interface ResolvedSandboxKey {
  key: string;
  account: string;
  plan: SandboxPlan;
  domains: ReadonlySet<string>;
  trackOpens: boolean;
  trackClicks: boolean;
  revoked: boolean;
}

/**
 * The sample template available when no `templates` option is given.
 * @publicApi
 */
export const SAMPLE_TEMPLATE: SandboxTemplate = {
  subject: 'Welcome, {{name}}',
  html: '<p>Hello {{name}}, <a href="https://example.com/start">get started</a>.</p>',
  text: 'Hello {{name}}, get started: https://example.com/start',
};

/**
 * Makes a fresh test key such as `sk_test_3f9a…`.
 * @publicApi
 */
export function generateSandboxKey(): string {
  return `sk_test_${randomBytes(16).toString('hex')}`;
}

/** Throws unless `key` can be sent as a bearer token (non-empty, no white space). */
export function checkKeyText(key: unknown): string {
  if (typeof key !== 'string' || !key || /\s/.test(key)) {
    throw new TypeError('every sandbox key must be a non-empty token');
  }
  return key;
}

/** Applies the defaults to the keys option. */
export function resolveKeys(options: SandboxOptions): ResolvedSandboxKey[] {
  const raw = options.keys?.length ? options.keys : [generateSandboxKey()];
  return raw.map((entry) => {
    const key = typeof entry === 'string' ? { key: entry } : entry;
    checkKeyText(key.key);
    const domains = key.domains ?? options.domains ?? ['example.com', 'example.test'];
    return {
      key: key.key,
      account: key.account ?? key.key,
      plan: key.plan ?? options.plan ?? 'growth',
      domains: new Set(domains.map((d) => d.toLowerCase())),
      trackOpens: key.tracking?.opens ?? options.tracking?.opens ?? false,
      trackClicks: key.tracking?.clicks ?? options.tracking?.clicks ?? false,
      revoked: key.revoked ?? false,
    };
  });
}
