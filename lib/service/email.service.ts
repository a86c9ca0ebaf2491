import { Inject, Injectable } from '@nestjs/common';
import { inspect } from 'node:util';
import { SentLookup } from '../delivery/find-sent.policy.js';
import { callStartMs, type DeliveryCall } from '../delivery/request.engine.js';
import { AccountDesk } from '../delivery/account-desk.store.js';
import { EmailAccounts, type DeskRequest } from '../delivery/email-accounts.store.js';
import { EmailResolvedOptions } from '../config/email.options.js';
import type {
  CallOptions,
  FindSentOptions,
  ListOptions,
  SendOptions,
} from '../interfaces/call-options.interface.js';
import type { BatchEmailItem, EmailInput } from '../interfaces/email-input.interface.js';
import type { ResolvedEmailOptions } from '../interfaces/email-module-options.interface.js';
import type {
  EmailDetail,
  EmailEvent,
  EmailLog,
  FindSentResult,
} from '../interfaces/email-records.interface.js';
import {
  parseArray,
  parseBatchResponse,
  parseEmailDetail,
  parseEmailEvent,
  parseEmailLog,
} from '../records/email-record.parser.js';
import type { SendManyOptions, SendManyResult } from '../interfaces/send-many.interface.js';
import { checkBatch, checkMany } from '../validation/batch.rules.js';
import { checkList, checkLookup, checkRead } from '../validation/query.rules.js';
import { checkSend, type CheckedSend } from '../validation/send.rules.js';
import { runSendMany } from './send-many.engine.js';
import { DeliveryObserver, isWatching, observeOperation } from '../telemetry/delivery.telemetry.js';
import type { OperationEvent } from '../telemetry/delivery.telemetry.js';
import { EmailSuppressions } from '../suppression/email-suppressions.service.js';
import { refusalOf, type SuppressionGate, withRest } from '../suppression/suppression.engine.js';

/** A read: it creates nothing, so any attempt may be repeated. */
function readCall<T>(operation: string, path: string, parse: (json: unknown) => T): DeliveryCall<T> {
  return { operation, method: 'GET', path, createsMessage: false, idempotent: true, parse };
}

const parseLogs = (json: unknown): EmailLog[] => parseArray(json, parseEmailLog);

/** A batch's items as identical sends, held against every look-up of the instance while it is in flight. */
const openItemsOf = (items: readonly BatchEmailItem[], since: number): SentLookup[] =>
  items.map((item) => new SentLookup(item, since));

/** The requests calls make, named by an abort that ends a call while its account is being resolved. */
const SEND_REQUEST: DeskRequest = Object.freeze({ method: 'POST', path: '/emails' });
const BATCH_REQUEST: DeskRequest = Object.freeze({ method: 'POST', path: '/emails/batch' });
const LIST_REQUEST: DeskRequest = Object.freeze({ method: 'GET', path: '/emails' });

/** The sweep's read of an account's latest records: the service's largest page, no retry, a short deadline. */
const SWEEP_READ = Object.freeze({ limit: 100, maxRetries: 0, timeoutMs: 10_000 });

/** The event of every `send` (observers only read it). */
const SEND_EVENT: OperationEvent = Object.freeze({ operation: 'send' });

/** The account a call's options name (undefined: the module's own), whatever the options are. */
const accountOf = (options: unknown): unknown =>
  typeof options === 'object' && options !== null ? (options as CallOptions).account : undefined;
const parseEvents = (json: unknown): EmailEvent[] => parseArray(json, parseEmailEvent);

/**
 * Sends email and reads message records through the service. Inject it anywhere once
 * `EmailModule` is imported.
 *
 * @example
 * constructor(private readonly email: EmailService) {}
 * await this.email.send({ to: ['ada@example.com'], subject: 'Hi', text: 'Hello' });
 * @publicApi
 */
@Injectable()
export class EmailService {
  /** The suppression gate every send, batch and job passes first (this instance's `EmailSuppressions`). */
  private readonly gate: SuppressionGate;

  constructor(
    @Inject(EmailResolvedOptions) private readonly options: ResolvedEmailOptions,
    @Inject(EmailAccounts) private readonly accounts: EmailAccounts,
    @Inject(DeliveryObserver) private readonly observer: DeliveryObserver,
    /** This instance's suppression list (the same as the injectable `EmailSuppressions`; reach a named instance's here). */
    @Inject(EmailSuppressions) readonly suppressions: EmailSuppressions,
  ) {
    this.gate = suppressions.gate;
    suppressions.sweepWith(
      (account) => this.list(account === undefined ? SWEEP_READ : { ...SWEEP_READ, account }),
      options.hasApiKey,
    );
  }

  /**
   * Drops a resolved account from the cache at once (its key was rotated or revoked in the app's store):
   * the next call for it asks the resolver again. Calls under way finish with the key they started with.
   */
  forgetAccount(accountId: string): void {
    this.accounts.forget(accountId);
  }

  /**
   * The desk a call's options name: the module's own at once, a cached account at once, else once the
   * resolver answered, within the call's own `timeoutMs` and until its own `signal` (an abort rejects with
   * `EmailAbortError` naming `request`). Rejects with `EmailAccountError`, never throws.
   * @internal the job layer resolves a job's account through it at enqueue and at each attempt
   */
  deskFor(options: unknown, request: DeskRequest = SEND_REQUEST): AccountDesk | Promise<AccountDesk> {
    const call = typeof options === 'object' && options !== null ? (options as CallOptions) : undefined;
    const given = call?.timeoutMs;
    const timeoutMs =
      typeof given === 'number' && given > 0 && Number.isFinite(given) ? given : this.options.timeoutMs;
    const signal = call?.signal instanceof AbortSignal ? call.signal : undefined;
    try {
      return this.accounts.desk(accountOf(options), { timeoutMs, signal, request });
    } catch (err) {
      return Promise.reject(err as Error);
    }
  }

  /** Runs `run` on the desk `options` name, at once when it is known (no extra turn for the module's own). */
  private onDesk<T>(
    options: unknown,
    request: DeskRequest,
    run: (desk: AccountDesk) => Promise<T>,
  ): Promise<T> {
    const desk = this.deskFor(options, request);
    return desk instanceof AccountDesk ? run(desk) : desk.then(run);
  }

  /** The operation's event, with the account id only when telemetry is asked to carry it. */
  private eventOf(event: OperationEvent, options: unknown): OperationEvent {
    if (!this.options.accountAttribute) return event;
    const account = accountOf(options);
    return typeof account === 'string' ? { ...event, account } : event;
  }

  /** The module's `defaultFrom` (the sender of an input without `from`), for code that checks an input as `send` will. */
  get defaultFrom(): string | undefined {
    return this.options.defaultFrom;
  }

  /**
   * Sends one email. The input is checked against every rule of the contract first; the request
   * carries an `Idempotency-Key` (yours, or one made for this call with `idempotency: 'auto'`) and
   * every retry reuses that key with the byte-identical body. When an attempt may have created the
   * message, the call is retried with the same key (the service replays that message's record); only
   * when no retry can follow is it looked up in the message log (`reconcile`), adopted only with proof.
   * @returns the message record; its `status` says whether it was sent or scheduled.
   * @throws EmailSendUncertainError when the outcome is still unknown at the end: retry only with
   * its `idempotencyKey` and the same input, or look the message up later with `findSent`.
   */
  send(input: EmailInput, maybeOptions?: SendOptions | null): Promise<EmailLog> {
    const own = accountOf(maybeOptions) === undefined ? this.accounts.own : null;
    if (own !== null && !isWatching(this.observer)) return this.sendNow(own, input, maybeOptions); // no closure, no event
    const run = () =>
      own !== null
        ? this.sendNow(own, input, maybeOptions)
        : this.onDesk(maybeOptions, SEND_REQUEST, (d) => this.sendNow(d, input, maybeOptions));
    return observeOperation(this.observer, this.eventOf(SEND_EVENT, maybeOptions), run);
  }

  /**
   * Sends on `desk` (the account's key, records and limits). Not `async`: the loop's own promise is
   * returned as it is (no frame and no extra turns around it).
   * @internal the job layer sends each attempt on the desk it resolved for it
   */
  sendNow(
    desk: AccountDesk,
    input: EmailInput,
    maybeOptions?: SendOptions | null,
    /** How long the limiter may make it wait for room (a job's attempt: 0, it goes back for later). */
    admitWithinMs?: number,
  ): Promise<EmailLog> {
    let c: CheckedSend;
    try {
      c = checkSend(input, maybeOptions, desk.options);
    } catch (err) {
      return Promise.reject(err as Error); // a bad input rejects, as the async method did; it never throws
    }
    if (this.gate.armed) {
      // The suppression list, before any request: refused, or sent to the recipients left (`partial`).
      const verdict = this.gate.verdict(c.input.to, desk.accountId);
      if (verdict !== undefined) {
        const rest = (to: string[]) => this.sendNow(desk, { ...c.input, to }, maybeOptions, admitWithinMs);
        if (verdict instanceof Promise)
          return verdict.then((v) =>
            v === undefined
              ? this.sendChecked(desk, c, admitWithinMs)
              : Array.isArray(v)
                ? rest(v)
                : Promise.reject(v),
          );
        return Array.isArray(verdict) ? rest(verdict) : Promise.reject(verdict);
      }
    }
    return this.sendChecked(desk, c, admitWithinMs);
  }

  /** Sends a checked input on `desk`. */
  private sendChecked(
    desk: AccountDesk,
    c: CheckedSend,
    admitWithinMs: number | undefined,
  ): Promise<EmailLog> {
    const call: DeliveryCall<EmailLog> = {
      operation: 'send',
      method: 'POST',
      path: '/emails',
      createsMessage: true,
      idempotent: c.idempotencyKey !== undefined,
      idempotencyKey: c.idempotencyKey,
      freshKey: c.freshKey,
      body: c.body,
      parse: this.gate.parseLog(desk.accountId),
      // The look-up reads the email back from the bytes sent only if it runs (see `SentLookup`).
      reconcile: c.reconcile ? new SentLookup(c.body, callStartMs(c.ctx)) : undefined,
      recipients: c.input.to.length,
      admitBy: admitWithinMs === undefined ? undefined : Date.now() + admitWithinMs,
    };
    return desk.engine.run(call, c.ctx, c.maxRetries);
  }

  /**
   * Sends 1 to 100 emails in one request. Batches have no idempotency and no attachments or scheduling.
   * A batch is retried only when nothing can have been accepted (connection refused, 429).
   * @throws EmailBatchUncertainError when the request may have been processed: it is never retried;
   * look its `items` up with `findSent` before sending any of them again.
   */
  sendBatch(items: BatchEmailItem[], maybeOptions?: CallOptions | null): Promise<EmailLog[]> {
    const batchSize = Array.isArray(items) ? items.length : 1;
    const event = this.eventOf({ operation: 'sendBatch', batchSize }, maybeOptions);
    return observeOperation(this.observer, event, () =>
      this.onDesk(maybeOptions, BATCH_REQUEST, (desk) => this.sendBatchNow(desk, items, maybeOptions)),
    );
  }

  private async sendBatchNow(
    desk: AccountDesk,
    items: BatchEmailItem[],
    maybeOptions?: CallOptions | null,
  ): Promise<EmailLog[]> {
    let c = checkBatch(items, maybeOptions, desk.options);
    if (this.gate.armed) {
      // A batch answers one record per item: an item refused refuses the batch (see docs/suppression.md).
      const verdicts = await this.gate.verdicts(
        c.items.map((i) => i.to),
        desk.accountId,
        'sendBatch',
      );
      if (verdicts !== undefined) {
        const refusal = refusalOf(verdicts);
        if (refusal !== undefined) throw refusal;
        c = checkBatch(withRest(c.items, verdicts), maybeOptions, desk.options);
      }
    }
    const call: DeliveryCall<EmailLog[]> = {
      operation: 'sendBatch',
      method: 'POST',
      path: '/emails/batch',
      createsMessage: true,
      idempotent: false,
      body: c.body,
      parse: this.gate.learning(parseBatchResponse, desk.accountId),
      batchItems: c.items,
      openItems: openItemsOf(c.items, callStartMs(c.ctx)),
      recipients: c.recipients,
    };
    return desk.engine.run(call, c.ctx, c.maxRetries);
  }

  /**
   * Sends any number of emails as batches of at most 100 (fewer when the `rateLimit` recipients budget
   * is smaller), one batch after the other, each under the rate limit. The whole list is checked
   * first: one bad item refuses the call before any request, with one `EmailValidationError` naming
   * every bad item by its index (`[3].to[0]`). A batch is retried only when nothing can have been
   * accepted; a batch that may have been accepted is never sent again: each of its items is looked up
   * (`findSent`) and answered `'sent'` only with proof of its own record, `'uncertain'` otherwise.
   * Nothing is ever sent twice.
   * @returns one answer per item, in the order given: `{ index, status: 'sent', record }`,
   * `{ index, status: 'not-sent', error }` or `{ index, status: 'uncertain', error }`.
   * @example
   * const results = await email.sendMany(customers.map((c) => ({ to: [c.email], subject, text })), {
   *   onBatch: ({ done, total }) => log(`${done}/${total}`),
   * });
   * const retryLater = results.filter((r) => r.status === 'not-sent').map((r) => items[r.index]);
   */
  async sendMany(items: BatchEmailItem[], maybeOptions?: SendManyOptions | null): Promise<SendManyResult[]> {
    const desk = await this.deskFor(maybeOptions, BATCH_REQUEST);
    const checked = checkMany(items, maybeOptions, desk.options);
    // Items the suppression list refuses are answered not-sent; the others go (to the recipients left).
    const verdicts = this.gate.armed
      ? await this.gate.verdicts(
          checked.items.map((i) => i.to),
          desk.accountId,
          'sendMany',
        )
      : undefined;
    if (verdicts !== undefined) checked.items = withRest(checked.items, verdicts);
    const deps = {
      sendBatch: (batch: BatchEmailItem[], options: CallOptions) => this.sendBatch(batch, options),
      findSent: (item: BatchEmailItem, options: FindSentOptions) => this.findSent(item, options),
    };
    return runSendMany(
      checked,
      deps,
      desk.recipientsLimit,
      verdicts?.map((v) => (v instanceof Error ? v : undefined)),
    );
  }

  /**
   * Refuses jobs the suppression list refuses, before anything is written: one `EmailSuppressedError`
   * naming the items (jobs are written all or none).
   * @internal the job layer asks it in `EmailJobs.write`
   */
  async refuseSuppressed(jobs: ReadonlyArray<{ to: readonly string[]; account?: string }>): Promise<void> {
    if (this.gate.armed) await this.gate.refuseJobs(jobs);
  }

  /** Lists message records (at most `limit`, 1 to 100; the service's default is 50). */
  list(maybeOptions?: ListOptions | null): Promise<EmailLog[]> {
    return observeOperation(this.observer, this.eventOf({ operation: 'list' }, maybeOptions), () =>
      this.onDesk(maybeOptions, LIST_REQUEST, async (desk) => {
        const c = checkList(maybeOptions, desk.options);
        const path = c.limit === undefined ? '/emails' : `/emails?limit=${c.limit}`;
        const parse = this.gate.learning(parseLogs, desk.accountId);
        return desk.engine.run(readCall('list', path, parse), c.ctx, c.maxRetries);
      }),
    );
  }

  /** Reads one message record with its html and text bodies. */
  get(id: number, maybeOptions?: CallOptions | null): Promise<EmailDetail> {
    const event = this.eventOf({ operation: 'get', messageId: id }, maybeOptions);
    return observeOperation(this.observer, event, () =>
      this.onDesk(maybeOptions, { method: 'GET', path: `/emails/${String(id)}` }, async (desk) => {
        const c = checkRead(id, maybeOptions, desk.options);
        const call = readCall('get', `/emails/${id}`, this.gate.learning(parseEmailDetail, desk.accountId));
        return desk.engine.run(call, c.ctx, c.maxRetries);
      }),
    );
  }

  /** Lists the open and click events of a message, newest first. */
  listEvents(id: number, maybeOptions?: CallOptions | null): Promise<EmailEvent[]> {
    const event = this.eventOf({ operation: 'listEvents', messageId: id }, maybeOptions);
    return observeOperation(this.observer, event, () =>
      this.onDesk(maybeOptions, { method: 'GET', path: `/emails/${String(id)}/events` }, async (desk) => {
        const c = checkRead(id, maybeOptions, desk.options);
        const call = readCall('listEvents', `/emails/${id}/events`, parseEvents);
        return desk.engine.run(call, c.ctx, c.maxRetries);
      }),
    );
  }

  /**
   * Looks a send up in the message log, and answers only with proof. Among the (at most 100) records
   * `GET /emails` returns, the look-alikes are those created at or after `since` (less 2 s of clock
   * skew) with the same sender and recipients (addresses compared without case or display name) and,
   * for an inline email, the same subject. Each look-alike is read (`GET /emails/{id}`, one request
   * each, at most 10) and a record is returned only when exactly one carries the input's own html and
   * text, and no other call of this instance holds it (was handed it, or is an identical send or batch
   * item still in flight whose content it carries); it is then held for this call. A template
   * email can never be proven this way (its rendered content is the service's): it answers
   * `'unproven'` with its look-alikes. `'none'` means nothing looks like it; `'held'` that what looks
   * like it is held by other calls of this instance (`held` lists them): do not send it again on the
   * strength of that answer. Use it after `EmailSendUncertainError` or `EmailBatchUncertainError`.
   * @returns `{ record, certainty, candidates, held }`: `record` is set only when `certainty` is `'proven'`.
   * @example
   * const since = new Date();
   * try { await email.send(input); } catch (e) {
   *   if (e instanceof EmailSendUncertainError) {
   *     const { record, certainty } = await email.findSent(input, { since });
   *   }
   * }
   */
  findSent(input: EmailInput | BatchEmailItem, options: FindSentOptions): Promise<FindSentResult> {
    return observeOperation(this.observer, this.eventOf({ operation: 'findSent' }, options), () =>
      this.onDesk(options, LIST_REQUEST, async (desk) => {
        const c = checkLookup(input, options, desk.options);
        const found = await desk.engine.findSent(
          new SentLookup(c.input, c.since.getTime()),
          c.ctx,
          c.maxRetries,
        );
        this.gate.learnFrom([found.record, ...found.candidates, ...found.held], desk.accountId);
        return found;
      }),
    );
  }

  toJSON(): Record<string, unknown> {
    return { baseUrl: this.options.baseUrl.href };
  }

  [inspect.custom](): string {
    return `EmailService { baseUrl: '${this.options.baseUrl.href}' }`;
  }
}
