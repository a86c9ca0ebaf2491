import {
  Inject,
  Injectable,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { EmailResolvedOptions } from '../config/email.options.js';
import { EmailError } from '../errors/email.error.js';
import { EmailValidationError, type EmailValidationIssue } from '../errors/email-validation.error.js';
import type { ResolvedEmailOptions } from '../interfaces/email-module-options.interface.js';
import type {
  EmailSuppression,
  EmailSuppressionAddOptions,
  EmailSuppressionListOptions,
  EmailSuppressionPage,
  EmailSuppressionReason,
  EmailSuppressionHealth,
  EmailSuppressionScope,
} from '../interfaces/suppression.interface.js';
import { ADDRESS_OK, checkAddress } from '../validation/address.rules.js';
import { accountIdProblem } from '../validation/call-options.rules.js';
import { HASHED_PREFIX, normalizeAddress } from './suppression-address.helpers.js';
import type { StoredEntry } from './suppression-store.interface.js';
import {
  ALL_ACCOUNTS_LIST,
  decodeEntry,
  fieldOf,
  REASON_CODES,
  REASONS,
  suppresses,
} from './suppression.constants.js';
import type { SuppressionGate } from './suppression.engine.js';
import { createSuppressionGate } from './suppression-stores.helpers.js';
import { SuppressionSweep } from './suppression-sweep.engine.js';
import { DeliveryObserver } from '../telemetry/delivery.telemetry.js';

/** Most addresses one call takes. */
const MAX_ADDRESSES = 1000;
const MAX_PAGE = 1000;
const DEFAULT_PAGE = 100;

/** A list and the addresses of a call, checked. */
interface Checked {
  list: string;
  /** Each address given, and its key in the list. */
  given: Array<{ address: string; key: string; normalized: string }>;
}

/**
 * The suppression list of an `EmailModule` instance: the addresses its sends, batches and jobs refuse
 * before any request (`EmailSuppressedError`). The module adds the recipients of every record it reads whose
 * status is `bounced` or `complained`; add the rest from your own handler of the provider's events (a
 * bounce, a complaint, an unsubscribe). Each account has its own list; `allAccounts: true` names the
 * module-wide one, which every account refuses too. See docs/suppression.md.
 *
 * @example
 * constructor(private readonly suppressions: EmailSuppressions) {}
 * await this.suppressions.add('ada@example.com', { reason: 'bounced', account: tenant.id });
 * const [entry] = await this.suppressions.check('ada@example.com', { account: tenant.id });
 * @publicApi
 */
@Injectable()
export class EmailSuppressions implements OnModuleInit, OnApplicationBootstrap, OnApplicationShutdown {
  /** The sweep (`suppression.sweep`), once the service gave it its reads. @internal */
  sweep?: SuppressionSweep;

  /**
   * The gate of this instance (its list, its local copy, its store), made from the module's options: in the
   * `rateLimit` Redis unless `suppression` names its store.
   * @internal `EmailService` screens every send with it
   */
  readonly gate: SuppressionGate;

  constructor(
    @Inject(EmailResolvedOptions) resolved: ResolvedEmailOptions,
    @Inject(DeliveryObserver) observer: DeliveryObserver,
  ) {
    this.gate = createSuppressionGate(resolved, resolved.rateLimit?.redis, observer);
  }

  /** Loads the list before the app serves: a store that does not answer fails the boot, naming the option. */
  async onModuleInit(): Promise<void> {
    await this.gate.open();
  }

  onApplicationBootstrap(): void {
    this.sweep?.start();
  }

  async onApplicationShutdown(): Promise<void> {
    this.sweep?.stop();
    await this.gate.close();
  }

  /**
   * The list as the health check reports it: its store answers (within a store command's deadline), and the
   * local copy; undefined with `suppression: false`.
   * @internal `EmailHealthIndicator` asks it through the service (a named instance exports no `EmailSuppressions`)
   */
  async health(): Promise<EmailSuppressionHealth | undefined> {
    const { gate } = this;
    if (!gate.options.enabled) return undefined;
    const status = await gate.ping().then(
      () => 'up' as const,
      () => 'down' as const,
    );
    return {
      store: gate.storeKind,
      status,
      entries: gate.mirror.set.size,
      current: gate.mirror.trusted,
      pendingWrites: gate.pendingWrites,
    };
  }

  /** What `whenStoreDown` says (for the health check's message). @internal */
  get whenStoreDown(): 'last-known' | 'refuse' {
    return this.gate.options.whenStoreDown;
  }

  /**
   * Gives the sweep (`suppression.sweep`) its reads of an account's latest records.
   * @internal `EmailService` calls it once
   */
  sweepWith(
    read: (account: string | undefined) => Promise<unknown>,
    hasOwn: boolean,
  ): SuppressionSweep | undefined {
    if (this.gate.options.sweep !== undefined) this.sweep ??= new SuppressionSweep(this.gate, read, hasOwn);
    return this.sweep;
  }

  /**
   * Puts addresses on a list (an address already there takes the new reason and expiry). Refused from the
   * next send on, by every process sharing the store (within a second; at once in this one).
   * @returns the entries as the list now holds them.
   * @throws EmailValidationError for a bad address, reason, account or expiry (nothing is added); EmailError
   * when the store did not take it (this process refuses the addresses already, and writes them once the
   * store answers; call again to be sure).
   */
  async add(
    address: string | readonly string[],
    options: EmailSuppressionAddOptions,
  ): Promise<EmailSuppression[]> {
    const issues: EmailValidationIssue[] = [];
    const o = (options ?? {}) as Partial<EmailSuppressionAddOptions>;
    const reason = o.reason as EmailSuppressionReason;
    if (!Object.hasOwn(REASON_CODES, reason as string))
      issues.push({ path: 'reason', message: "must be 'bounced', 'complained', 'unsubscribed' or 'manual'" });
    const { expiresAt } = o;
    if (expiresAt !== undefined && !(expiresAt instanceof Date && expiresAt.getTime() > Date.now()))
      issues.push({ path: 'expiresAt', message: 'must be a Date in the future' });
    const c = this.checked(address, o, issues, false);
    const since = Date.now();
    const entry = { code: REASON_CODES[reason], since, time: expiresAt?.getTime() ?? 0 };
    await this.write(c.given.map((g) => ({ field: fieldOf(c.list, g.key), entry })));
    return c.given.map((g) => entryOf(fieldOf(c.list, g.key), entry, g.normalized));
  }

  /**
   * Takes addresses off a list (or keyed hashes, as `list` gives them with `hashAddresses`): mailed again
   * from the next send on. A removal is remembered, so that a record that bounced before it does not put
   * the address back (a bounce after it does).
   * @returns how many of them were suppressed.
   */
  async remove(address: string | readonly string[], options?: EmailSuppressionScope): Promise<number> {
    const c = this.checked(address, options ?? {}, [], true);
    const fields = c.given.map((g) => fieldOf(c.list, g.key));
    const now = Date.now();
    const before = await this.read(fields);
    await this.write(fields.map((field) => ({ field, entry: { code: 0, since: now, time: now } })));
    return before.filter((e) => e !== null && suppresses(e, now)).length;
  }

  /**
   * The entries that refuse the given addresses now: on the list named, and, for an account's list (or the
   * module's own), on the module-wide list too (as a send is checked). An address on neither is left out.
   */
  async check(
    address: string | readonly string[],
    options?: EmailSuppressionScope,
  ): Promise<EmailSuppression[]> {
    const c = this.checked(address, options ?? {}, [], false);
    const lists = c.list === ALL_ACCOUNTS_LIST ? [c.list] : [c.list, ALL_ACCOUNTS_LIST];
    const fields = c.given.flatMap((g) =>
      lists.map((list) => fieldOf(list, this.gate.keyOf(list, g.normalized))),
    );
    const entries = await this.read(fields);
    const now = Date.now();
    const found: EmailSuppression[] = [];
    c.given.forEach((g, i) => {
      for (let j = 0; j < lists.length; j++) {
        const entry = entries[i * lists.length + j];
        if (entry && suppresses(entry, now))
          return void found.push(entryOf(fields[i * lists.length + j], entry, g.normalized));
      }
    });
    return found;
  }

  /**
   * A page of a list's entries that refuse mail now, in the order of their addresses. Give the page's
   * `next` as `after` for the next one. With `hashAddresses`, entries carry their keyed hash as `address`.
   */
  async list(options?: EmailSuppressionListOptions): Promise<EmailSuppressionPage> {
    const o = options ?? {};
    const issues: EmailValidationIssue[] = [];
    const limit = o.limit ?? DEFAULT_PAGE;
    if (!(Number.isInteger(limit) && limit >= 1 && limit <= MAX_PAGE))
      issues.push({ path: 'limit', message: `must be an integer from 1 to ${MAX_PAGE}` });
    let after: string | undefined;
    if (o.after !== undefined) {
      after = typeof o.after === 'string' ? Buffer.from(o.after, 'base64url').toString('utf8') : undefined;
      if (!after) issues.push({ path: 'after', message: 'must be the `next` of a page this list gave' });
    }
    const list = this.listOf(o, issues);
    if (issues.length > 0) throw new EmailValidationError(issues);
    const page = await this.reading(this.page(list, after, limit));
    return page.next === undefined
      ? { entries: page.entries }
      : { entries: page.entries, next: Buffer.from(page.next, 'utf8').toString('base64url') };
  }

  /** Up to `limit` entries of `list` that refuse mail now, after `after`, and the cursor after them. */
  private async page(
    list: string,
    after: string | undefined,
    limit: number,
  ): Promise<{ entries: EmailSuppression[]; next?: string }> {
    const entries: EmailSuppression[] = [];
    let cursor = after;
    const now = Date.now();
    for (;;) {
      const page = await this.gate.page(list, cursor, limit - entries.length);
      page.fields.forEach((field, i) => {
        const entry = decodeEntry(page.values[i]);
        if (entry && suppresses(entry, now)) entries.push(entryOf(field, entry));
      });
      if (page.fields.length > 0) cursor = page.fields[page.fields.length - 1].slice(list.length + 1);
      if (!page.more) return { entries };
      if (entries.length >= limit) return { entries, next: cursor };
    }
  }

  private read(fields: readonly string[]): ReturnType<SuppressionGate['read']> {
    return this.reading(this.gate.read(fields));
  }

  /** A read of the store, its failure as an `EmailError` that says so. */
  private reading<T>(promise: Promise<T>): Promise<T> {
    return promise.catch((err: unknown) => {
      throw new EmailError('The suppression store did not answer; try again once it does', {
        retryable: true,
        cause: err,
      });
    });
  }

  private async write(ops: Parameters<SuppressionGate['write']>[0]): Promise<void> {
    if (!this.gate.options.enabled)
      throw new EmailError(
        'The suppression list is off (EmailModule suppression: false): nothing was added or removed',
      );
    try {
      await this.gate.write(ops);
    } catch (err) {
      throw new EmailError(
        'The suppression store did not take the change; this process refuses the addresses added already, ' +
          'and writes them once the store answers. Call again to be sure every process has them.',
        { retryable: true, cause: err },
      );
    }
  }

  /** The list `options` names, with a problem for a bad account or both account and allAccounts. */
  private listOf(o: EmailSuppressionScope, issues: EmailValidationIssue[]): string {
    if (o.allAccounts !== undefined && typeof o.allAccounts !== 'boolean')
      issues.push({ path: 'allAccounts', message: 'must be a boolean' });
    if (o.allAccounts === true) {
      if (o.account !== undefined)
        issues.push({
          path: 'account',
          message: 'must be left out with allAccounts: true (the module-wide list)',
        });
      return ALL_ACCOUNTS_LIST;
    }
    if (o.account !== undefined) {
      const problem = accountIdProblem(o.account);
      if (problem !== undefined) issues.push({ path: 'account', message: problem });
    }
    return this.gate.listOf(o.account);
  }

  /** The addresses and the list of a call, or one `EmailValidationError` naming every problem. */
  private checked(
    address: string | readonly string[],
    options: EmailSuppressionScope,
    issues: EmailValidationIssue[],
    hashesToo: boolean,
  ): Checked {
    const list = this.listOf(options, issues);
    const many = Array.isArray(address);
    const addresses: unknown[] = many ? (address as unknown[]) : [address];
    if (addresses.length === 0 || addresses.length > MAX_ADDRESSES)
      issues.push({ path: 'address', message: `give 1 to ${MAX_ADDRESSES} addresses` });
    const given: Checked['given'] = [];
    addresses.slice(0, MAX_ADDRESSES).forEach((a, i) => {
      const path = many ? `address[${i}]` : 'address';
      if (typeof a === 'string' && hashesToo && a.startsWith(HASHED_PREFIX)) {
        given.push({ address: a, key: a, normalized: a });
      } else if (typeof a !== 'string' || checkAddress(a) !== ADDRESS_OK) {
        issues.push({
          path,
          message: 'must be an email address (local@domain.tld, or Name <local@domain.tld>)',
        });
      } else {
        const normalized = normalizeAddress(a);
        given.push({ address: a, key: this.gate.keyOf(list, normalized), normalized });
      }
    });
    if (issues.length > 0) throw new EmailValidationError(issues);
    return { list, given };
  }
}

/** An entry as `list` and `check` give it. */
function entryOf(field: string, entry: StoredEntry, address?: string): EmailSuppression {
  const nl = field.indexOf('\n');
  const list = field.slice(0, nl);
  const out: EmailSuppression = {
    address: address ?? field.slice(nl + 1),
    reason: REASONS[entry.code]!,
    since: new Date(entry.since),
  };
  if (entry.time !== 0) out.expiresAt = new Date(entry.time);
  if (list.startsWith('a:')) out.account = list.slice(2);
  if (list === ALL_ACCOUNTS_LIST) out.allAccounts = true;
  return out;
}
