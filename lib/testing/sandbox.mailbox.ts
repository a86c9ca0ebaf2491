import type { SandboxBounce } from './sandbox.bounces.js';
import type { SandboxClock } from './sandbox.clock.js';
import type { SandboxCore, SandboxLimitCounts } from './sandbox.core.js';
import type { SandboxFaults } from './sandbox.faults.js';
import { copyDetail, type SandboxEmailDetail, type SandboxEmailEvent } from './sandbox.records.js';
import type { SandboxRegistry } from './sandbox.registry.js';
import type { SandboxRequestRecord } from './sandbox.requests.js';
import type { StoredMessage } from './sandbox.store.js';
import { trackingRefusal } from './sandbox.tracking.js';

/**
 * A message as a test sees it: the record with its bodies, plus what the send carried that the
 * record does not hold (template, variables, attachments).
 * @publicApi
 */
export interface SandboxSentMessage extends SandboxEmailDetail {
  /** The template the send named, or null for an inline message. */
  templateId: number | null;
  /** The template variables the send gave, or null. */
  variables: Record<string, string> | null;
  /** The attachments, decoded; `content` is null once the sandbox stopped keeping the bytes (past 32 MiB). */
  attachments: Array<{ filename: string; contentType: string | null; size: number; content: Buffer | null }>;
  /** The html as the send carried it (a template's rendered), before tracking added its pixel and links. */
  sentHtml: string | null;
  /** The `Idempotency-Key` the send carried, or null (a batch item, a send without one, a restored message). */
  idempotencyKey: string | null;
  /** The message's tags (`mailbox.tag`; the test kit adds `job:<id>` to a job's message). */
  tags: string[];
}

/** A stored message as tests see it, with what the send carried beyond the record. */
export function sentMessage(core: SandboxCore, m: StoredMessage): SandboxSentMessage {
  const extras = core.extras.of(m);
  return {
    ...copyDetail(m.detail),
    templateId: extras.templateId,
    variables: extras.variables && { ...extras.variables },
    attachments: extras.attachments.map((a) => ({ ...a })),
    sentHtml: extras.html,
    idempotencyKey: core.extras.requestOf(m)?.idempotencyKey ?? null,
    tags: [...core.tags.of(m)],
  };
}

/**
 * One mailbox of a sandbox: an account with its own API key, verified domains, message log (ids from
 * 1), idempotency keys, quota, faults and clock, served by the sandbox's server. The API reached with
 * its key never shows another mailbox's mail. `EmailSandbox` itself is the default mailbox.
 *
 * @example
 * const mailbox = sandbox.mailbox({ domains: ['shop.test'] });
 * // EmailModule.forRoot({ apiKey: mailbox.apiKey, baseUrl: mailbox.baseUrl })
 * expect(mailbox.messages()).toHaveLength(1);
 * mailbox.close();
 * @publicApi
 */
export class SandboxMailbox {
  /** The mailbox's name, as the outbox page's switcher shows it (`'default'` for the sandbox's own). */
  readonly name: string;
  /** Base URL to give the client: the sandbox's. */
  readonly baseUrl: string;
  /** The (first) API key that reaches this mailbox. */
  readonly apiKey: string;
  /** This mailbox's clock; moving it sends its due scheduled messages. */
  readonly clock: SandboxClock;
  /** Fault injection for requests made with this mailbox's key. */
  readonly faults: SandboxFaults;

  /** @internal */
  constructor(
    /** @internal */
    protected readonly core: SandboxCore,
    baseUrl: string,
    /** @internal */
    protected readonly registry: SandboxRegistry,
  ) {
    this.name = core.name;
    this.baseUrl = baseUrl;
    this.apiKey = core.primaryKey;
    this.clock = core.clock;
    this.faults = core.faults;
  }

  /** Every key of this mailbox, in the order they were given or added, revoked ones included. */
  get keys(): string[] {
    return [...this.core.keys.keys()];
  }

  /**
   * Adds an API key to this mailbox at run time, as a key rotation does: requests with it reach the same
   * account (message log, quota; Idempotency-Keys too unless `idempotencyScope` is `'key'`) and show in
   * `requests()`. The other keys keep working until `revokeKey`. Returns the key: `key`, or a fresh
   * random `sk_test_…` one. Throws when a mailbox of this sandbox already holds the key.
   * @example
   * const next = mailbox.addKey();
   * // ...the app moves to `next`...
   * mailbox.revokeKey(mailbox.apiKey); // the old key is now answered 401
   */
  addKey(key?: string): string {
    return this.registry.addKey(this.core, key);
  }

  /**
   * Revokes one of this mailbox's keys: requests with it are answered 401 (and still show in this
   * mailbox's `requests()`). The messages sent with it stay. Throws for a key the mailbox does not hold.
   */
  revokeKey(key: string): void {
    this.registry.revokeKey(this.core, key);
  }

  /** Verified sending domains of the mailbox's (first) key. */
  get domains(): string[] {
    return [...(this.core.keys.get(this.core.primaryKey)?.domains ?? [])];
  }

  /**
   * The environment variables an app reads its email settings from (`emailConfig`'s names), pointing
   * at this mailbox: `{ EMAIL_API_KEY, EMAIL_BASE_URL }`, with another prefix when given.
   * @example
   * Object.assign(process.env, mailbox.env()); // before the app's module is compiled
   */
  env(prefix = 'EMAIL_'): Record<string, string> {
    return { [`${prefix}API_KEY`]: this.apiKey, [`${prefix}BASE_URL`]: this.baseUrl };
  }

  /** Every message held, oldest first, with bodies. */
  messages(): SandboxEmailDetail[] {
    this.core.tick();
    return this.core.store.all().map((m) => copyDetail(m.detail));
  }

  /** Every message held, oldest first, with bodies, template, variables and attachments. */
  sent(): SandboxSentMessage[] {
    this.core.tick();
    return this.core.store.all().map((m) => this.withExtras(m));
  }

  /**
   * @internal The message with this id as `sent()` shows it, or undefined: what the test kit reads to tag
   * a job's message without copying the whole mailbox.
   */
  sentById(id: number): SandboxSentMessage | undefined {
    const msg = this.core.store.get(id);
    return msg && this.withExtras(msg);
  }

  /** One message with bodies, or undefined. */
  message(id: number): SandboxEmailDetail | undefined {
    this.core.tick();
    const msg = this.core.store.get(id);
    return msg && copyDetail(msg.detail);
  }

  /** Events of a message, newest first (empty for an unknown id). */
  events(id: number): SandboxEmailEvent[] {
    return (this.core.store.get(id)?.events ?? []).map((e) => ({ ...e })).reverse();
  }

  /**
   * How many requests this mailbox's `quota` and `rateLimit` answered 429 so far (injected faults are not
   * counted here): what a client's own rate limit should keep at zero.
   * @example
   * expect(sandbox.limited()).toEqual({ quota: 0, rate: 0 });
   */
  limited(): SandboxLimitCounts {
    return this.core.limited();
  }

  /** Requests received with this mailbox's key (the last `maxRequestLog`), oldest first, key masked. */
  requests(): SandboxRequestRecord[] {
    return this.core.requests.list();
  }

  /** Records an open as if the pixel were fetched; throws when tracking does not apply. */
  simulateOpen(id: number): SandboxEmailEvent {
    return this.simulate(id, 'open', null);
  }

  /** Records a click on `url` (default: the first tracked link); throws when tracking does not apply. */
  simulateClick(id: number, url?: string): SandboxEmailEvent {
    const msg = this.core.store.get(id);
    return this.simulate(id, 'click', url ?? msg?.links[0] ?? null);
  }

  /**
   * Sets a message's status (and error text) by hand, e.g. to see how an app handles `bounced`.
   * @example
   * mailbox.setStatus(3, 'failed', 'mailbox unavailable');
   */
  setStatus(id: number, status: string, errorMessage: string | null = null): SandboxEmailDetail {
    const msg = this.mustGet(id);
    Object.assign(msg.detail, { status, errorMessage, updatedAt: this.clock.date().toISOString() });
    if (status !== 'scheduled') msg.dueAt = null;
    this.core.store.touch();
    return copyDetail(msg.detail);
  }

  /**
   * Makes `address` bounce, as a recipient server that refuses it would: this mailbox still accepts mail
   * to it (the create answer says `sent`), and the record reads `bounced` (with an error text) from then
   * on, as a provider's log would. With `{ existing: true }`, its sent records already held read so too.
   * @example
   * mailbox.bounce('gone@example.com');
   * const { id } = await email.send({ to: ['gone@example.com'], subject, text });
   * expect((await email.get(id)).status).toBe('bounced');
   */
  bounce(address: string, options: { existing?: boolean } = {}): void {
    this.core.bounces.mark(address, 'bounced', options.existing === true, this.core.store, this.core.tick());
  }

  /** As `bounce`, for a recipient who marked the mail as spam: its records read `complained`. */
  complain(address: string, options: { existing?: boolean } = {}): void {
    this.core.bounces.mark(
      address,
      'complained',
      options.existing === true,
      this.core.store,
      this.core.tick(),
    );
  }

  /** The addresses this mailbox makes bounce or complain (lower case, no display name). */
  bounces(): SandboxBounce[] {
    return this.core.bounces.list();
  }

  /** Stops making `address` bounce or complain (records already changed stay); answers whether it did. */
  clearBounce(address: string): boolean {
    const cleared = this.core.bounces.clear(address);
    this.core.store.touch();
    return cleared;
  }

  /**
   * Adds tags to a message: labels of your own that the outbox page shows and searches (`tag:signup`;
   * `job:<id>` for a tag `job:<id>`, which `EmailTestingModule` adds to the message each job of the app
   * sent). A tag is 1 to 200 characters without control characters, at most 20 a message; one already
   * there is not added twice. Returns the message's tags; throws for an unknown id or a bad tag.
   * @example
   * mailbox.tag(mail.id, 'signup', 'job:welcome-42');
   */
  tag(id: number, ...tags: string[]): string[] {
    const held = this.core.tags.add(this.mustGet(id), tags);
    this.core.store.touch();
    return held;
  }

  /** Forgets messages, idempotency keys, quota windows, requests, faults and bounces; the clock restarts. */
  reset(): void {
    this.core.reset();
  }

  /**
   * Removes the mailbox from the sandbox: its key is answered 401 from now on and the page no longer
   * lists it. (On `EmailSandbox` itself, `close()` stops the whole server instead.)
   */
  close(): Promise<void> {
    this.registry.remove(this.core);
    return Promise.resolve();
  }

  private withExtras(m: StoredMessage): SandboxSentMessage {
    return sentMessage(this.core, m);
  }

  private simulate(id: number, type: 'open' | 'click', url: string | null): SandboxEmailEvent {
    const now = this.core.tick();
    const msg = this.mustGet(id);
    const refusal = trackingRefusal(msg, type);
    if (refusal) throw new Error(refusal);
    if (type === 'click' && url === null) throw new Error(`email ${id} has no link to click; pass a url`);
    return this.core.store.addEvent(msg, type, url, now);
  }

  private mustGet(id: number): StoredMessage {
    const msg = this.core.store.get(id);
    if (!msg) throw new Error(`email ${id} does not exist in the ${this.name} mailbox`);
    return msg;
  }
}
