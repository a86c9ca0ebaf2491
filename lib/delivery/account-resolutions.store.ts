import type { ResolvedAccount } from '../config/email-account.options.js';
import { EmailAccountError } from '../errors/email-account.error.js';
import { EmailAbortError } from '../errors/email-transport.error.js';
import type { EmailAccount } from '../interfaces/email-account.interface.js';
import type { Clock } from '../time/clock.helpers.js';
import type { AccountDesk } from './account-desk.store.js';

/** The resolver as the store calls it: the `accounts` option, whatever its form, as one function. */
export type ResolveAccount = (accountId: string) => Promise<EmailAccount | null> | EmailAccount | null;

/** The request a call will make, named by an abort that ends it while its account is being resolved. */
export interface DeskRequest {
  readonly method: string;
  readonly path: string;
}

/** How long a call waits for its account's desk, and what ends the wait early. */
export interface DeskWait {
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
  readonly request: DeskRequest;
}

/** What the resolutions are made with: the resolver, the check of its answer, and what makes a desk of it. */
export interface ResolutionParts {
  readonly resolver: ResolveAccount;
  /** The answer checked like the module's options: the account, or the problems. */
  readonly check: (answer: EmailAccount) => ResolvedAccount | string[];
  /**
   * The desk of a checked answer, made and cached by the accounts (`seq` orders resolutions: an older one
   * finishing later is answered the newer one's desk).
   */
  readonly settle: (accountId: string, account: ResolvedAccount, seq: number) => AccountDesk;
  readonly clock: Clock;
}

/** One call of the resolver for an account, which calls for that account wait on together. */
class Resolution {
  /** Forgotten while it ran: its answer is neither cached nor used. */
  stale = false;
  /** Every call waiting on it has left (its own deadline or signal): later calls start another. */
  abandoned = false;
  waiters = 0;
  promise!: Promise<AccountDesk | undefined>;

  constructor(readonly seq: number) {}
}

/**
 * The resolver calls of one module instance: calls for an account share one resolver call, each waiting
 * within its own deadline (`EmailAccountError` `'resolver-failed'`) and until its own signal
 * (`EmailAbortError`); when every caller has left, the next call asks the resolver again. `forget` makes
 * every call running for the account stale: its answer is never cached, and its callers ask again.
 */
export class AccountResolutions {
  /** The resolutions running for each account (the last neither forgotten nor abandoned is joined). */
  private readonly running = new Map<string, Set<Resolution>>();
  private seq = 0;

  constructor(private readonly parts: ResolutionParts) {}

  /** The desk of `id` once a resolution of it answers, within the call's `wait`. */
  async waitFor(id: string, wait: DeskWait): Promise<AccountDesk> {
    const deadline = this.parts.clock.now() + wait.timeoutMs;
    for (;;) {
      const resolution = this.joinable(id) ?? this.start(id);
      resolution.waiters++;
      let desk: AccountDesk | undefined;
      try {
        desk = await this.within(resolution, id, deadline, wait);
      } finally {
        resolution.waiters--;
      }
      if (desk !== undefined && !resolution.stale) return desk;
    }
  }

  /** Makes every resolution running for `id` stale: not cached, its callers ask again. */
  forget(id: string): void {
    const running = this.running.get(id);
    if (running !== undefined) for (const r of running) r.stale = true;
    this.running.delete(id);
  }

  /** Makes every running resolution stale (the module closes). */
  close(): void {
    for (const set of this.running.values()) for (const r of set) r.stale = true;
    this.running.clear();
  }

  private joinable(id: string): Resolution | undefined {
    let found: Resolution | undefined;
    for (const r of this.running.get(id) ?? []) if (!r.stale && !r.abandoned) found = r;
    return found;
  }

  private start(id: string): Resolution {
    const resolution = new Resolution(++this.seq);
    let set = this.running.get(id);
    if (set === undefined) this.running.set(id, (set = new Set()));
    set.add(resolution);
    resolution.promise = this.resolve(id, resolution).finally(() => {
      const now = this.running.get(id);
      now?.delete(resolution);
      if (now?.size === 0) this.running.delete(id);
    });
    resolution.promise.catch(() => undefined); // every caller may have left: its failure is theirs to see
    return resolution;
  }

  /** The resolution's answer, or this call's own end: its deadline (`resolver-failed`) or its signal. */
  private within(
    resolution: Resolution,
    id: string,
    deadline: number,
    wait: DeskWait,
  ): Promise<AccountDesk | undefined> {
    const { signal, request, timeoutMs } = wait;
    return new Promise((resolve, reject) => {
      const leave = (err: Error): void => {
        done();
        if (resolution.waiters === 1) resolution.abandoned = true; // the last caller: a new call asks again
        reject(err);
      };
      const onAbort = (): void =>
        leave(new EmailAbortError({ ...request, cause: signal?.reason, outcome: 'not-sent' }));
      const late = new Error(`the account resolver took longer than ${timeoutMs} ms`);
      const timer = setTimeout(
        () =>
          leave(
            new EmailAccountError({ accountId: id, problem: 'resolver-failed', cause: secretFree(late) }),
          ),
        Math.max(0, deadline - this.parts.clock.now()),
      );
      const done = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      resolution.promise.then(
        (desk) => {
          done();
          resolve(desk);
        },
        (err: unknown) => {
          done();
          reject(err as Error);
        },
      );
    });
  }

  /** One resolver call for `id`: its answer checked, then settled (undefined: forgotten meanwhile). */
  private async resolve(id: string, resolution: Resolution): Promise<AccountDesk | undefined> {
    let answer: EmailAccount | null;
    try {
      answer = await this.parts.resolver(id);
    } catch (cause) {
      if (resolution.stale) return undefined;
      throw new EmailAccountError({ accountId: id, problem: 'resolver-failed', cause: secretFree(cause) });
    }
    if (resolution.stale) return undefined;
    if (answer === null || answer === undefined)
      throw new EmailAccountError({ accountId: id, problem: 'unknown' });
    const account = this.parts.check(answer);
    if (Array.isArray(account))
      throw new EmailAccountError({
        accountId: id,
        problem: 'invalid-account',
        detail: `the account resolver's answer is not a usable account: ${account.join('; ')}. Nothing was sent.`,
      });
    return this.parts.settle(id, account, resolution.seq);
  }
}

/**
 * The resolver's failure as the error's cause: its name and message only, never the object itself (the
 * app's error may carry a connection string, or the account's key in a field).
 */
function secretFree(cause: unknown): Error {
  const err = new Error(cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause));
  err.name = 'AccountResolverFailure';
  return err;
}
