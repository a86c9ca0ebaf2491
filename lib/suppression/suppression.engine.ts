import type { LoggerService } from '@nestjs/common';
import { EmailError } from '../errors/email.error.js';
import { EmailSuppressedError, type EmailSuppressedAddress } from '../errors/email-suppressed.error.js';
import type { EmailLog } from '../interfaces/email-records.interface.js';
import { parseEmailLog } from '../records/email-record.parser.js';
import type {
  EmailSuppressionReason,
  ResolvedSuppressionOptions,
} from '../interfaces/suppression.interface.js';
import type { DeliveryObserver, SuppressedEvent } from '../telemetry/delivery.telemetry.js';
import { suppressionSecretOf } from '../config/suppression.options.js';
import { withTimeout } from '../time/clock.helpers.js';
import type { FingerprintSet } from './fingerprint-set.store.js';
import { hashedKey, HASHED_PREFIX, normalizeAddress } from './suppression-address.helpers.js';
import { SuppressionMirror } from './suppression-mirror.store.js';
import { SuppressionWriter } from './suppression-writer.store.js';
import type {
  StoredEntry,
  StoredPage,
  SuppressionOp,
  SuppressionStore,
} from './suppression-store.interface.js';
import {
  accountList,
  ALL_ACCOUNTS_LIST,
  decodeEntry,
  fieldOf,
  mayLearnOver,
  OWN_LIST,
  REASON_CODES,
  REASONS,
  suppresses,
} from './suppression.constants.js';

const CONTEXT = 'EmailModule';

/** What the gate decided for one message: the recipients it refuses (with reasons) and those that may go. */
export interface Screened {
  readonly refused: EmailSuppressedAddress[];
  readonly rest: string[];
}

/** For each message: undefined (as it is), its remaining recipients, or the error that refuses it. */
export type Verdicts = Array<string[] | EmailSuppressedError | undefined>;

/** The one error of a call refused as a whole (a batch, a set of jobs), naming its refused items. */
export function refusalOf(verdicts: Verdicts): EmailSuppressedError | undefined {
  const items: number[] = [];
  const addresses: EmailSuppressedAddress[] = [];
  verdicts.forEach((v, i) => {
    if (!(v instanceof EmailSuppressedError)) return;
    items.push(i);
    addresses.push(...v.addresses);
  });
  return items.length === 0 ? undefined : new EmailSuppressedError({ addresses, items });
}

/** How long a store that failed a read is left alone before the send path reads it again. */
const DOWN_PAUSE_MS = 1_000;

/** Each item with the recipients the list leaves it (`partial: 'send-to-rest'`); refused ones as they are. */
export function withRest<T extends { to: string[] }>(items: T[], verdicts: Verdicts): T[] {
  return items.map((item, i) => {
    const v = verdicts[i];
    return Array.isArray(v) ? { ...item, to: v } : item;
  });
}

/** The parts of the gate. */
export interface GateParts {
  readonly store: SuppressionStore;
  readonly options: ResolvedSuppressionOptions;
  readonly observer: DeliveryObserver;
  readonly logger: LoggerService | false;
}

/**
 * The suppression gate of one module instance: asked by every send, batch and job before any request or
 * write (`screen`), fed by every record the module reads (`learn`) and by the app (`write`, through
 * `EmailSuppressions`). It answers from the local copy (`SuppressionMirror`) with no round trip while the
 * copy is trusted, and reads the store only when it is not (behind, or holding fewer entries than the store).
 */
export class SuppressionGate {
  /** Whether a send has anything to check: an entry in the copy, or a copy that cannot answer alone (or none yet). */
  get armed(): boolean {
    return !this.opened || this.mirror.set.size > 0 || !this.mirror.trusted;
  }
  /** The list was loaded and is followed. */
  opened = false;
  private opening?: Promise<void>;
  readonly mirror: SuppressionMirror;
  private readonly hashed: boolean;
  /** `hashAddresses`' secret ('' without it), in a private slot: no inspect output shows it. */
  readonly #secret: string;
  /** Writes the store did not take, written again with backoff. */
  private readonly writer: SuppressionWriter;
  private downUntil = 0;
  /** Accounts sent for since boot (for the sweep's default), only when a sweep is on. */
  readonly accountsSeen: Set<string> | null;
  private readonly logParsers = new Map<string | undefined, (json: unknown) => EmailLog>();

  constructor(private readonly parts: GateParts) {
    const { options, store } = parts;
    const secret = suppressionSecretOf(options);
    this.#secret = secret ?? '';
    this.hashed = secret !== undefined;
    this.accountsSeen = options.sweep === undefined ? null : new Set();
    this.mirror = new SuppressionMirror(
      store,
      secret,
      options.maxLocalEntries,
      {
        trust: (trusted, why) => {
          if (trusted) void this.writer.flush();
          this.log('warn', `suppression list ${trusted ? 'current again' : 'not current'}: ${why}`);
        },
        overflow: (entries) =>
          this.log(
            'warn',
            `suppression list holds more than maxLocalEntries (${options.maxLocalEntries}; ${entries} seen): sends it does not hold read the store`,
          ),
        trouble: (why) => this.log('warn', `suppression list could not catch up with its store (${why})`),
      },
      options.commandTimeoutMs,
    );
    this.writer = new SuppressionWriter(store, this.mirror, options.commandTimeoutMs, (line) =>
      this.log('warn', line),
    );
  }

  get storeKind(): SuppressionStore['kind'] {
    return this.parts.store.kind;
  }

  get options(): ResolvedSuppressionOptions {
    return this.parts.options;
  }

  /**
   * Connects, loads the list and follows it, once (at the module's init, or at first use when the app was
   * never initialized). Rejects when the store does not answer (the boot fails); a later call tries again.
   */
  open(): Promise<void> {
    this.opening ??= (async () => {
      await this.parts.store.open();
      await this.mirror.start();
      this.opened = true;
    })().catch((err: unknown) => {
      this.opening = undefined;
      throw err;
    });
    return this.opening;
  }

  async close(): Promise<void> {
    this.writer.close();
    this.mirror.close();
    await this.parts.store.close();
  }

  // The send path -------------------------------------------------------------------------------------

  /** The list of `account` (undefined: the module's own). */
  listOf(account: string | undefined): string {
    return account === undefined ? OWN_LIST : accountList(account);
  }

  /**
   * What the list says of one message's recipients for `account`: undefined when all may go (the common
   * case, answered from the copy with no allocation), else who is refused and who may go. Reads the store
   * when the copy cannot answer alone.
   */
  screen(
    to: readonly string[],
    account: string | undefined,
  ): Screened | undefined | Promise<Screened | undefined> {
    if (this.accountsSeen !== null && account !== undefined) this.accountsSeen.add(account);
    if (!this.opened) return this.open().then(() => this.screen(to, account));
    if (!this.mirror.trusted) return this.screenFromStore([to], account).then((all) => all[0]);
    const { set } = this.mirror;
    let refused: EmailSuppressedAddress[] | undefined;
    for (let i = 0; i < to.length; i++) {
      const code = this.refusalCode(set, to[i], account);
      if (code !== 0) (refused ??= []).push({ address: to[i], reason: REASONS[code]! });
    }
    return refused === undefined ? undefined : screened(to, refused);
  }

  /** `screen` for many messages at once (a batch, `sendMany`, jobs): undefined when every one may go whole. */
  screenAll(
    messages: ReadonlyArray<readonly string[]>,
    account: string | undefined,
  ): Array<Screened | undefined> | undefined | Promise<Array<Screened | undefined> | undefined> {
    if (!this.opened) return this.open().then(() => this.screenAll(messages, account));
    if (!this.mirror.trusted)
      return this.screenFromStore(messages, account).then((all) => (all.some(Boolean) ? all : undefined));
    let any = false;
    const all = messages.map((to) => {
      const one = this.screen(to, account) as Screened | undefined;
      any ||= one !== undefined;
      return one;
    });
    return any ? all : undefined;
  }

  /** The reason code that refuses `recipient` now, on `account`'s list or the module-wide one, or 0. */
  private refusalCode(set: FingerprintSet, recipient: string, account: string | undefined): number {
    const code = liveCodeAt(set, this.mirror.slotOf(set, recipient, account, false));
    if (code !== 0 || !this.mirror.wide) return code;
    return liveCodeAt(set, this.mirror.slotOf(set, recipient, account, true));
  }

  /**
   * The copy cannot answer alone (behind its store, or holding fewer entries than the store): read each
   * recipient's entries in the store. A store that does not answer leaves the answer to `whenStoreDown`.
   */
  private async screenFromStore(
    messages: ReadonlyArray<readonly string[]>,
    account: string | undefined,
  ): Promise<Array<Screened | undefined>> {
    const own = this.listOf(account);
    const fields: string[] = [];
    for (const to of messages)
      for (const r of to) {
        const normalized = normalizeAddress(r);
        fields.push(
          fieldOf(own, this.keyOf(own, normalized)),
          fieldOf(ALL_ACCOUNTS_LIST, this.keyOf(ALL_ACCOUNTS_LIST, normalized)),
        );
      }
    let values: Array<string | null> | undefined;
    if (this.parts.store.connected && Date.now() >= this.downUntil) {
      try {
        values = await this.bounded(this.parts.store.read(fields), 'reading');
      } catch {
        this.downUntil = Date.now() + DOWN_PAUSE_MS;
      }
    }
    if (values === undefined) {
      if (this.parts.options.whenStoreDown === 'refuse') throw storeDownError();
      const set = this.mirror.set; // the list as this process last knew it
      return messages.map((to) => {
        const refused = to.flatMap((r) => {
          const code = this.refusalCode(set, r, account);
          return code === 0 ? [] : [{ address: r, reason: REASONS[code]! }];
        });
        return refused.length === 0 ? undefined : screened(to, refused);
      });
    }
    const now = Date.now();
    let at = 0;
    return messages.map((to) => {
      const refused: EmailSuppressedAddress[] = [];
      for (const r of to) {
        const mine = decodeEntry(values[at++]);
        const wide = decodeEntry(values[at++]);
        const entry = mine && suppresses(mine, now) ? mine : wide && suppresses(wide, now) ? wide : null;
        if (entry) refused.push({ address: r, reason: REASONS[entry.code]! });
      }
      return refused.length === 0 ? undefined : screened(to, refused);
    });
  }

  /** Tells the observers of a refusal: counts by reason, never an address. */
  reportRefused(operation: SuppressedEvent['operation'], refused: readonly EmailSuppressedAddress[]): void {
    const reasons: Partial<Record<EmailSuppressionReason, number>> = {};
    for (const { reason } of refused) reasons[reason] = (reasons[reason] ?? 0) + 1;
    try {
      this.parts.observer.suppressed?.({ operation, recipients: refused.length, reasons });
    } catch {
      // an observer never changes a call's outcome
    }
  }

  // What a call does with the answer ------------------------------------------------------------------

  /**
   * One message (`send`, a job's attempt): undefined when it goes as it is, the recipients it goes to
   * instead (`partial: 'send-to-rest'`), or the error that refuses it. Reported to the observers.
   */
  verdict(
    to: readonly string[],
    account: string | undefined,
  ): string[] | EmailSuppressedError | undefined | Promise<string[] | EmailSuppressedError | undefined> {
    const screenedNow = this.screen(to, account);
    if (screenedNow === undefined) return undefined;
    if (screenedNow instanceof Promise)
      return screenedNow.then((one) => (one === undefined ? undefined : this.decide(one, 'send')));
    return this.decide(screenedNow, 'send');
  }

  private decide(one: Screened, operation: SuppressedEvent['operation']): string[] | EmailSuppressedError {
    this.reportRefused(operation, one.refused);
    if (this.parts.options.partial === 'send-to-rest' && one.rest.length > 0) return one.rest;
    return new EmailSuppressedError({ addresses: one.refused });
  }

  /**
   * Many messages (a batch's items, `sendMany`'s, jobs): undefined when all go as they are, else for each
   * message undefined (as it is), its remaining recipients, or the error that refuses it.
   */
  verdicts(
    messages: ReadonlyArray<readonly string[]>,
    account: string | undefined,
    operation: SuppressedEvent['operation'],
  ): Verdicts | undefined | Promise<Verdicts | undefined> {
    const all = this.screenAll(messages, account);
    if (all === undefined) return undefined;
    const decideAll = (list: Array<Screened | undefined> | undefined): Verdicts | undefined => {
      if (list === undefined) return undefined;
      const refused = list.flatMap((one) => one?.refused ?? []);
      this.reportRefused(operation, refused);
      const rest = this.parts.options.partial === 'send-to-rest';
      return list.map((one) =>
        one === undefined
          ? undefined
          : rest && one.rest.length > 0
            ? one.rest
            : new EmailSuppressedError({ addresses: one.refused }),
      );
    };
    return all instanceof Promise ? all.then(decideAll) : decideAll(all);
  }

  /**
   * Jobs about to be written, each for its account: rejects with one `EmailSuppressedError` naming the items
   * refused (jobs are written all or none); resolves when every one may be written.
   */
  async refuseJobs(jobs: ReadonlyArray<{ to: readonly string[]; account?: string }>): Promise<void> {
    const verdicts: Verdicts = [];
    for (const account of new Set(jobs.map((j) => j.account))) {
      const mine = jobs.flatMap((j, i) => (j.account === account ? [i] : []));
      const answer = await this.verdicts(
        mine.map((i) => jobs[i].to),
        account,
        'job',
      );
      mine.forEach((i, k) => (verdicts[i] = answer?.[k]));
    }
    const refusal = refusalOf(verdicts);
    if (refusal !== undefined) throw refusal;
  }

  // Learning ------------------------------------------------------------------------------------------

  /**
   * `parse` (of a record, or of records), learning from what it returns when learning is on: the records
   * of `list`, `get` and `sendBatch` go through it.
   */
  learning<T extends EmailLog | EmailLog[]>(
    parse: (json: unknown) => T,
    account: string | undefined,
  ): (json: unknown) => T {
    if (this.parts.options.learn === false) return parse;
    return (json) => {
      const parsed = parse(json);
      this.learnFrom(Array.isArray(parsed) ? parsed : [parsed], account);
      return parsed;
    };
  }

  /** `parseEmailLog`, learning from the record (a send's answer, hence a job's outcome): one per account, made once. */
  parseLog(account: string | undefined): (json: unknown) => EmailLog {
    if (this.parts.options.learn === false) return parseEmailLog;
    let parse = this.logParsers.get(account);
    if (parse === undefined) {
      parse = (json) => {
        const log = parseEmailLog(json);
        if (learnedReason(log.status) !== undefined) this.learnFrom([log], account);
        return log;
      };
      if (this.logParsers.size < 10_000) this.logParsers.set(account, parse);
    }
    return parse;
  }

  /**
   * Learns from records the module read for `account`: each one whose `status` reads `bounced` or
   * `complained` (any case) puts its recipients on the list, unless an entry already refuses them or the
   * app removed them after the record last changed. Runs in the background; never throws.
   */
  learnFrom(records: ReadonlyArray<EmailLog | null | undefined>, account: string | undefined): void {
    const { learn } = this.parts.options;
    if (learn === false) return;
    if (!this.opened) {
      void this.open().then(
        () => this.learnFrom(records, account),
        () => undefined,
      );
      return;
    }
    let ops: SuppressionOp[] | undefined;
    const now = Date.now();
    for (const record of records) {
      const reason = learnedReason(record?.status);
      if (reason === undefined || !record) continue;
      const list = learn === 'all-accounts' ? ALL_ACCOUNTS_LIST : this.listOf(account);
      const learnedAt = record.updatedAt instanceof Date ? record.updatedAt.getTime() : now;
      for (const recipient of record.toAddresses) {
        const normalized = normalizeAddress(recipient);
        const field = fieldOf(list, this.keyOf(list, normalized));
        if (!this.mayLearn(recipient, list, account, learnedAt, now)) continue;
        (ops ??= []).push({ field, entry: { code: REASON_CODES[reason], since: now, time: 0 }, learnedAt });
      }
    }
    if (ops === undefined) return;
    const count = ops.length;
    void this.write(ops).then(
      (applied) => {
        const n = applied.filter(Boolean).length;
        if (n > 0)
          this.log('debug', `suppression list learned ${n} address${n === 1 ? '' : 'es'} from records`);
      },
      () =>
        this.log(
          'warn',
          `suppression list could not write ${count} learned address(es) yet: kept, and tried again`,
        ),
    );
  }

  /** Whether the copy lets a record last changed at `learnedAt` put `recipient` on `list`. */
  private mayLearn(
    recipient: string,
    list: string,
    account: string | undefined,
    learnedAt: number,
    now: number,
  ): boolean {
    const { set } = this.mirror;
    const slot = this.mirror.slotOf(set, recipient, account, list === ALL_ACCOUNTS_LIST);
    if (slot < 0) return true;
    return mayLearnOver({ code: set.codeAt(slot), since: 0, time: set.timeAt(slot) }, learnedAt, now);
  }

  // Writes (add, remove, learned) ---------------------------------------------------------------------

  /** The key of a normalized address in `list`: itself, or its keyed hash with `hashAddresses`. */
  keyOf(list: string, normalized: string): string {
    if (normalized.startsWith(HASHED_PREFIX)) return normalized; // `remove` of an entry `list` gave hashed
    return this.hashed ? hashedKey(this.#secret, list, normalized) : normalized;
  }

  /**
   * Writes a batch to the store and applies it here; when the store does not take it, what suppresses is
   * refused here at once and written later (`SuppressionWriter`), and the promise rejects.
   */
  async write(ops: readonly SuppressionOp[]): Promise<readonly boolean[]> {
    await this.open();
    return this.writer.write(ops);
  }

  /** Entries the store has not taken yet. */
  get pendingWrites(): number {
    return this.writer.size;
  }

  // Reads for the app ---------------------------------------------------------------------------------

  /** The stored entries of `fields`. */
  async read(fields: readonly string[]): Promise<Array<StoredEntry | null>> {
    await this.open();
    const values = await this.bounded(this.parts.store.read(fields), 'reading');
    return values.map(decodeEntry);
  }

  /** A page of raw entries of `list` (the caller keeps those that refuse mail now). */
  async page(list: string, after: string | undefined, limit: number): Promise<StoredPage> {
    await this.open();
    return this.bounded(this.parts.store.page(list, after, limit), 'listing');
  }

  /** Whether the store answers, within the deadline of a store command. */
  async ping(): Promise<void> {
    await this.open();
    await this.bounded(this.parts.store.ping(), 'answering');
  }

  /** True for the one process that takes `name` for `ms` (memory: always). */
  async claim(name: string, ms: number): Promise<boolean> {
    await this.open();
    return this.bounded(this.parts.store.claim(name, ms), 'claiming');
  }

  private bounded<T>(promise: Promise<T>, what: string): Promise<T> {
    return withTimeout(promise, this.parts.options.commandTimeoutMs, `the suppression store ${what}`);
  }

  log(level: 'warn' | 'debug', line: string): void {
    const { logger } = this.parts;
    if (logger === false) return;
    if (level === 'warn') logger.warn(line, CONTEXT);
    else logger.debug?.(line, CONTEXT);
  }
}

/** The code of the entry in `slot` when it refuses mail now, else 0 (no slot, a removal, an ended entry). */
function liveCodeAt(set: FingerprintSet, slot: number): number {
  if (slot < 0) return 0;
  const code = set.codeAt(slot);
  if (code === 0) return 0;
  const time = set.timeAt(slot);
  return time === 0 || time > Date.now() ? code : 0;
}

/** A message's recipients split: refused (with reasons) and the rest. */
function screened(to: readonly string[], refused: EmailSuppressedAddress[]): Screened {
  return { refused, rest: to.filter((r) => !refused.some((x) => x.address === r)) };
}

/** The reason a record's status teaches (`bounced`, `complained`, any case), or undefined. */
function learnedReason(status: unknown): 'bounced' | 'complained' | undefined {
  if (typeof status !== 'string' || (status.length !== 7 && status.length !== 10)) return undefined;
  const s = status.toLowerCase();
  return s === 'bounced' ? 'bounced' : s === 'complained' ? 'complained' : undefined;
}

/** A send refused because the list could not be read and `whenStoreDown` is `'refuse'`. */
export function storeDownError(): EmailError {
  return new EmailError(
    "Not sent: the suppression list cannot be read (its store does not answer) and suppression.whenStoreDown is 'refuse'; try again once it answers",
    { retryable: true, outcome: 'not-sent' },
  );
}
