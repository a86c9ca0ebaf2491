import { EmailApiError, EmailRateLimitError } from '../errors/email-api.error.js';
import { EmailBatchUncertainError } from '../errors/email-batch-uncertain.error.js';
import { EmailSendUncertainError } from '../errors/email-send-uncertain.error.js';
import { EmailAbortError, EmailConnectionError, EmailTimeoutError } from '../errors/email-transport.error.js';
import { EmailError } from '../errors/email.error.js';
import type { ApiCall, CallContext, EmailApiClient } from '../http/email-api.client.js';
import type { BatchEmailItem } from '../interfaces/email-input.interface.js';
import type { EmailLog, FindSentResult } from '../interfaces/email-records.interface.js';
import { parseArray, parseEmailDetail, parseEmailLog } from '../records/email-record.parser.js';
import { ClaimedRecords } from './claimed-records.store.js';
import { IdenticalSends, type OpenSend } from './identical-sends.store.js';
import { isWatching, type DeliveryObserver } from '../telemetry/delivery.telemetry.js';
import { FIND_SENT_LIMIT, lookAlikes, type SentLookup } from './find-sent.policy.js';
import { fitsDeadline, MIN_ATTEMPT_BUDGET_MS, retryPlan, uncertainEnd } from '../policy/delivery.policy.js';
import { realClock, type Clock, type SleepEnd } from '../time/clock.helpers.js';
import type { SendRateLimiter } from './rate-limit.store.js';

/** `loop`'s `entering` for a send already open that waits for nothing. */
const NO_WAIT: Promise<boolean> = Promise.resolve(true);

/** What `afterFailure` returns when another attempt follows. */
const RETRY = Symbol('retry');

/** Retries of the `GET /emails` look-up made while reconciling an uncertain send. */
export const RECONCILE_LOOKUP_RETRIES = 1;

/** When the call whose context this is started, epoch ms (its deadline less its budget). */
export const callStartMs = (ctx: CallContext): number => ctx.deadline - ctx.timeoutMs;

const parseLogs = (json: unknown): EmailLog[] => parseArray(json, parseEmailLog);

/** The `GET /emails?limit=100` a look-up reads. */
const lookupCall: ApiCall<EmailLog[]> = {
  operation: 'lookup',
  method: 'GET',
  path: `/emails?limit=${FIND_SENT_LIMIT}`,
  createsMessage: false,
  idempotent: true,
  parse: parseLogs,
};

/** Most look-alike records one look-up reads (`GET /emails/{id}`) in search of the call's own. */
export const MAX_PROOF_READS = 10;

/** The `GET /emails/{id}` that shows a look-alike's content. */
const detailCall = (id: number) =>
  ({
    operation: 'lookup',
    method: 'GET',
    path: `/emails/${id}`,
    createsMessage: false,
    idempotent: true,
    parse: parseEmailDetail,
  }) satisfies ApiCall<unknown>;

/** A call as the loop runs it: the description, plus what reconciles it when it may have created a message. */
export interface DeliveryCall<T> extends ApiCall<T> {
  /** A single send: how to find its message in the log (only when reconciliation is on). */
  reconcile?: SentLookup;
  /** A batch: its items, carried by `EmailBatchUncertainError` when it may have been processed. */
  batchItems?: readonly BatchEmailItem[];
  /**
   * The key was made for this call (`idempotency: 'auto'`): no other request can hold it, so a 409
   * can only mean "an earlier attempt is still pending", never "another request owns this key".
   */
  freshKey?: boolean;
  /**
   * A batch's items as open sends (only when reconciliation is on): held against every look-up of the
   * instance while the batch is in flight.
   */
  openItems?: readonly OpenSend[];
  /** Recipients the request carries (a send's `to`; a batch's total), counted by `rateLimit`. */
  recipients?: number;
  /**
   * Epoch ms by which the limiter must let the request through, else the call is refused at once (a job's
   * attempt: it gives its job back for later rather than hold a worker while it waits). @default the deadline
   */
  admitBy?: number;
}

/** Where one call stands after its failures so far. */
interface CallState {
  attempt: number;
  /** Some attempt may have reached the service and been processed. */
  uncertain: boolean;
  /** The call's place among open identical sends, when it reconciles. */
  open?: OpenSend;
}

/**
 * The one request loop of the module, in the spirit of openai-node's client: every call (read,
 * batch, send) runs through `run`, which asks the decision table (`policy/delivery.policy.ts`), from
 * the call's description alone, whether a failure is retried (backoff with full jitter, `Retry-After`,
 * the deadline, the caller's signal) and what the call's last failure becomes, and, for a call that may
 * have created a message, looks it up in the message log (reconciliation) when no retry follows. Rules
 * (design.md, "Delivery rules"):
 * - reads are retried on connection errors, timeouts, 429, 500, 502, 503;
 * - a failure that proves nothing was created (refused connection, 429) is retried;
 * - one that may have been processed (timeout or reset after sending, 5xx, 409) is retried only when
 *   the call is idempotent (a send with a key: the replay of its key is its own record); when no retry
 *   can follow, a send is reconciled (looked up, adopted only with proof), a batch ends with
 *   `EmailBatchUncertainError`, a send with `EmailSendUncertainError`;
 * - a 409 that no earlier attempt of the call explains is reconciled once, then thrown, never retried.
 * Records returned by sends are claimed (`ClaimedRecords`) so that no look-up hands them out again,
 * and look-ups wait for identical sends that may still claim one (`IdenticalSends`).
 */
export class RequestEngine {
  constructor(
    private readonly api: EmailApiClient,
    private readonly observer: DeliveryObserver,
    private readonly claimed: ClaimedRecords,
    private readonly identical: IdenticalSends,
    /** The `rateLimit` option at work, or null without it (then a request costs one comparison more). */
    private readonly rate: SendRateLimiter | null = null,
    /** Time and waits (backoff, `Retry-After`): a spec's clock may replace the real one. */
    private readonly clock: Clock = realClock,
  ) {}

  /**
   * Runs `call` to its result or its final error, and reports the outcome to the observer. Not `async`:
   * a call with no limiter, no observer watching and nothing to wait for makes its first attempt here,
   * with one `then` on it (nearly every call succeeds at once); anything else goes through `loop`.
   */
  run<T>(call: DeliveryCall<T>, ctx: CallContext, maxRetries: number): Promise<T> {
    const state: CallState = { attempt: 1, uncertain: false, open: call.reconcile };
    if (this.rate !== null || call.openItems !== undefined || isWatching(this.observer))
      return this.loop(call, ctx, maxRetries, state, undefined);
    const entering = state.open === undefined ? undefined : this.identical.enter(state.open, ctx);
    if (entering !== undefined) return this.loop(call, ctx, maxRetries, state, entering);
    return this.api.attempt(call, ctx).then(
      (answer) => {
        this.claim(call, answer);
        if (state.open !== undefined) this.identical.leave(state.open);
        return answer;
      },
      (failure: unknown) => this.loop(call, ctx, maxRetries, state, NO_WAIT, failure),
    );
  }

  /**
   * The request loop: waits to enter (`entering`: the send is open already), then attempts until a result
   * or the final error. `first`, when given, is the failure of an attempt already made.
   */
  private async loop<T>(
    call: DeliveryCall<T>,
    ctx: CallContext,
    maxRetries: number,
    state: CallState,
    entering: Promise<boolean> | undefined,
    ...first: [unknown?]
  ): Promise<T> {
    const watched = isWatching(this.observer); // else a success tells the observer nothing
    try {
      if (entering === undefined && state.open !== undefined)
        entering = this.identical.enter(state.open, ctx);
      if (entering !== undefined) await entering; // only while a look-up of an identical send runs
      const items = call.openItems === undefined ? undefined : this.enterItems(call.openItems, ctx);
      if (items !== undefined) await items; // only while a look-up of an item's signature runs
      let result: T | typeof RETRY =
        first.length === 0 ? RETRY : await this.afterFailure(call, ctx, maxRetries, state, first[0]);
      while (result === RETRY) {
        let answer: T;
        const anchor = this.rate === null ? undefined : await this.admit(call, ctx, state);
        try {
          answer = await this.api.attempt(call, ctx);
        } catch (failure) {
          anchor?.();
          result = await this.afterFailure(call, ctx, maxRetries, state, failure);
          continue;
        }
        anchor?.();
        this.claim(call, answer);
        if (watched) this.observer.attempt({ call, attempt: state.attempt, attempts: maxRetries + 1 });
        result = answer;
      }
      if (watched) this.observer.outcome({ call });
      return result;
    } catch (err) {
      this.observer.outcome({ call, error: err });
      throw err;
    } finally {
      if (state.open !== undefined) this.identical.leave(state.open);
      if (call.openItems !== undefined) for (const item of call.openItems) this.identical.leave(item);
    }
  }

  /** A send's or a batch's records, remembered as given to this call (no look-up hands them out again). */
  private claim<T>(call: DeliveryCall<T>, answer: T): void {
    if (call.reconcile) this.claimed.claim(answer as EmailLog);
    else if (call.batchItems) for (const record of answer as EmailLog[]) this.claimed.claim(record);
  }

  /**
   * Opens the items of a batch as identical sends: while the batch is in flight, a record carrying an
   * item's content may be the batch's, so no look-up of the instance takes it (and a look-up of an
   * identical send waits for the batch's answer). Waits only while a look-up of an item's signature runs.
   */
  private enterItems(items: readonly OpenSend[], ctx: CallContext): Promise<boolean[]> | undefined {
    const waits: Promise<boolean>[] = [];
    for (const item of items) {
      const entering = this.identical.enter(item, ctx);
      if (entering !== undefined) waits.push(entering);
    }
    return waits.length > 0 ? Promise.all(waits) : undefined;
  }

  /**
   * Waits for the request's share of the `rateLimit` budgets (before every attempt, reads included);
   * returns what re-anchors a shared window this request opened (see `SendRateLimiter`).
   * Throws when the caller aborts while waiting, or when the share cannot come before the deadline:
   * a `not-sent` `EmailRateLimitError` naming the budget and when it has room again (a call that may
   * already have created its message ends as it would at its deadline).
   */
  private async admit(
    call: DeliveryCall<unknown>,
    ctx: CallContext,
    state: CallState,
  ): Promise<(() => void) | undefined> {
    const until = call.admitBy === undefined ? ctx.deadline : Math.min(ctx.deadline, call.admitBy);
    const took = await this.rate!.take(call.recipients ?? 0, until, ctx.signal);
    if (took.kind === 'taken') return took.anchor; // called once the attempt has its answer
    if (took.kind === 'aborted') throw this.aborted(call, ctx, state);
    const refused = new EmailRateLimitError({
      status: 429,
      method: call.method,
      path: call.path,
      budget: took.budget,
      budgetOf: took.owner,
      budgetSize: took.size,
      retryAfterMs: took.never ? undefined : took.retryAfterMs,
      retryable: !took.never,
      outcome: call.createsMessage ? 'not-sent' : undefined,
    });
    throw state.uncertain ? finalError(call, ctx, state, refused, false) : refused;
  }

  /**
   * The public `findSent`: reads the message log and answers with the send's own record only with
   * proof (see `prove`); a proven record is held for the caller, as a send's own would be.
   */
  async findSent(lookup: SentLookup, ctx: CallContext, maxRetries: number): Promise<FindSentResult> {
    return this.prove(lookup, await this.run(lookupCall, ctx, maxRetries), ctx, maxRetries);
  }

  /**
   * "A call's record is always its own message": among the look-alikes of `lookup` in `records`, the one
   * whose content (read with `GET /emails/{id}`) is the send's own, when exactly one is and no other call
   * of this instance holds it or may still hold it. Held: a record handed to a send, a batch or a
   * look-up (`ClaimedRecords`), or one that carries the content of an identical call still in flight (a
   * send, or an item of a batch not yet answered: `IdenticalSends.inFlight`). Sender, recipients and
   * subject alone never prove it; a template send (content rendered by the service) never can be; more
   * look-alikes than `MAX_PROOF_READS` are not read. The verdict is made in one synchronous step after
   * the reads, and a proven record is claimed in it, so two look-ups never take one record.
   * `'none'` means no record looks like it at all; `'held'`, that the only ones that could be it are held.
   */
  private async prove(
    lookup: SentLookup,
    records: readonly EmailLog[],
    ctx: CallContext,
    maxRetries: number,
    self?: OpenSend,
  ): Promise<FindSentResult> {
    const all = lookAlikes(records, lookup.criteria());
    if (all.length === 0) return { record: null, certainty: 'none', candidates: [], held: [] };
    const taken = (r: EmailLog): boolean => this.claimed.has(r);
    let free = all.filter((r) => !taken(r));
    if (!lookup.provable() || free.length > MAX_PROOF_READS) {
      const held = all.filter(taken);
      const certainty = free.length === 0 ? 'held' : 'unproven';
      return { record: null, certainty, candidates: free, held };
    }
    const details = await Promise.all(free.map((c) => this.run(detailCall(c.id), ctx, maxRetries)));
    // From here on, synchronous: what other calls hold is read once, after every read has come back.
    const contenders = this.identical.inFlight(lookup.signature(), self);
    const heldAt = free.map((r, i) => taken(r) || contenders.some((c) => c.carries(details[i])));
    const own = free.filter((_, i) => !heldAt[i] && lookup.carries(details[i]));
    const ownHeld = free.some((_, i) => heldAt[i] && lookup.carries(details[i]));
    const othersHold = new Set(free.filter((_, i) => heldAt[i]));
    const held = all.filter((r) => othersHold.has(r) || !free.includes(r));
    free = free.filter((r) => !othersHold.has(r));
    if (own.length === 1) {
      this.claimed.claim(own[0]);
      return { record: own[0], certainty: 'proven', candidates: free, held };
    }
    const nothingFree = own.length === 0 && (ownHeld || free.length === 0);
    return { record: null, certainty: nothingFree ? 'held' : 'unproven', candidates: free, held };
  }

  /**
   * What follows a failed attempt: the call's final error (thrown), a record found by reconciliation,
   * or RETRY once the backoff has been waited. Apart from `run` so that a call that succeeds at once
   * (nearly all) carries none of this in its async frame.
   */
  private async afterFailure<T>(
    call: DeliveryCall<T>,
    ctx: CallContext,
    maxRetries: number,
    state: CallState,
    err: unknown,
  ): Promise<T | typeof RETRY> {
    const attempts = maxRetries + 1;
    if (!(err instanceof EmailError)) throw err;
    if (err instanceof EmailAbortError) {
      this.observer.attempt({ call, attempt: state.attempt, attempts, error: err });
      throw this.aborted(call, ctx, state, err);
    }
    if (this.rate !== null && err instanceof EmailRateLimitError && err.budget === undefined) {
      await this.rate.pause(err.retryAfterMs); // a 429 that came anyway: every process sharing the budget waits
    }
    const processed = err.outcome === 'uncertain';
    const failedAt = this.clock.now();
    const { delayMs: delay, conflict } = retryPlan(
      {
        retryable: err.retryable,
        status: err instanceof EmailApiError ? err.status : undefined,
        // The service's own ask: one above the cap is not retried (the error's `retryAfterMs` is capped).
        retryAfterMs:
          err instanceof EmailRateLimitError ? (err.requestedRetryAfterMs ?? err.retryAfterMs) : undefined,
        processed,
      },
      {
        attempt: state.attempt,
        maxRetries,
        idempotent: call.idempotent,
        freshKey: call.freshKey,
        uncertain: state.uncertain,
        deadline: ctx.deadline,
      },
      failedAt,
    );
    this.observer.attempt({ call, attempt: state.attempt, attempts, error: err, retryDelayMs: delay });
    if (processed) state.uncertain = true;
    // The look-up runs only when no retry follows. A retry of a send is made with the same key and
    // bytes: the service replays that key's own record, which a look-up can never beat (another
    // process may have sent a message with this very content); a look-up is the last resort.
    if (call.reconcile && state.uncertain && delay === undefined) {
      const found = await this.reconcile(call, call.reconcile, ctx, state);
      if (found) return found as T;
    }
    if (delay === undefined) throw finalError(call, ctx, state, err, conflict);
    const end = await this.wait(Math.max(0, delay - (this.clock.now() - failedAt)), ctx);
    if (end === 'aborted') throw this.aborted(call, ctx, state);
    if (end === 'deadline') throw finalError(call, ctx, state, err, conflict);
    state.attempt++;
    return RETRY;
  }

  /**
   * The look-up of a send that may have created its message: a record is adopted only with proof that
   * it is this call's own (`prove`), and is then claimed so that no other call gets it; none is taken
   * while an identical send of this instance may still claim one. No proof, no record: the call then
   * retries with its key (the service replays its own record) or ends uncertain.
   */
  private async reconcile(
    call: DeliveryCall<unknown>,
    lookup: SentLookup,
    ctx: CallContext,
    state: CallState,
  ): Promise<EmailLog | null> {
    const until = { deadline: ctx.deadline - MIN_ATTEMPT_BUDGET_MS, signal: ctx.signal };
    if (until.deadline <= this.clock.now() || state.open === undefined) {
      this.observer.reconcile({ call, result: 'skipped' });
      return null;
    }
    try {
      const found = await this.identical.exclusive(state.open, until, async () => {
        const records = await this.run(lookupCall, ctx, RECONCILE_LOOKUP_RETRIES);
        return this.prove(lookup, records, ctx, RECONCILE_LOOKUP_RETRIES, state.open);
      });
      if (found === undefined) {
        if (ctx.signal?.aborted) throw this.aborted(call, ctx, state);
        this.observer.reconcile({ call, result: 'skipped' });
        return null;
      }
      this.observer.reconcile(
        found.record
          ? { call, result: 'found', messageId: found.record.id }
          : { call, result: found.certainty === 'none' ? 'not-found' : 'unproven' },
      );
      return found.record;
    } catch (err) {
      if (err instanceof EmailAbortError) throw this.aborted(call, ctx, state);
      this.observer.reconcile({ call, result: 'failed', error: err });
      return null;
    }
  }

  /** Sleeps `ms` on the clock, cut short by the caller's signal; 'deadline' when no attempt can follow it in time. */
  private wait(ms: number, ctx: CallContext): Promise<SleepEnd> {
    if (!fitsDeadline(this.clock.now(), ms, ctx.deadline)) {
      return Promise.resolve(ctx.signal?.aborted ? 'aborted' : 'deadline');
    }
    return this.clock.sleep(ms, { signal: ctx.signal, deadline: ctx.deadline });
  }

  /**
   * The caller's abort, decided here for every call: a read has no outcome; a call that may create
   * a message is `'uncertain'` once any attempt may have been processed, `'not-sent'` otherwise.
   */
  private aborted(
    call: DeliveryCall<unknown>,
    ctx: CallContext,
    state: CallState,
    err?: EmailAbortError,
  ): EmailAbortError {
    if (err && (err.outcome === 'uncertain' || !state.uncertain)) return err;
    const { method, path } = call;
    const outcome = call.createsMessage ? (state.uncertain ? 'uncertain' : 'not-sent') : undefined;
    return new EmailAbortError({ method, path, cause: err?.cause ?? ctx.signal?.reason, outcome });
  }
}

/** The error a call ends with when it has no result, as the table decides (`uncertainEnd`). */
function finalError(
  call: DeliveryCall<unknown>,
  ctx: CallContext,
  state: CallState,
  err: EmailError,
  conflict: boolean,
): EmailError {
  const end = uncertainEnd({
    createsMessage: call.createsMessage,
    uncertain: state.uncertain,
    conflict,
    batch: call.batchItems !== undefined,
    ambiguous:
      err.outcome === 'uncertain' &&
      (err instanceof EmailApiError ||
        err instanceof EmailTimeoutError ||
        err instanceof EmailConnectionError),
    hasKey: call.idempotencyKey !== undefined,
  });
  if (end === 'batch-uncertain') {
    return new EmailBatchUncertainError({
      items: call.batchItems!,
      since: new Date(callStartMs(ctx)),
      attempts: state.attempt,
      cause: err,
    });
  }
  if (end === 'send-uncertain') {
    return new EmailSendUncertainError({
      idempotencyKey: call.idempotencyKey!,
      attempts: state.attempt,
      cause: err,
    });
  }
  return err;
}
