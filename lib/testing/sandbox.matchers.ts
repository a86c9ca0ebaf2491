import type { SandboxSentMessage } from './sandbox.mailbox.js';
import {
  addressMatches,
  describe,
  describeMatch,
  listSent,
  mismatch,
  type SandboxMessageMatch,
} from './sandbox.match.js';
import { checkMatch } from './sandbox.criteria.js';

/**
 * What the matchers and helpers read messages from: a mailbox, the sandbox (its default mailbox), or
 * an array of messages taken from one.
 * @publicApi
 */
export type SandboxMessageSource = { sent(): SandboxSentMessage[] } | readonly SandboxSentMessage[];

/** The result a Jest or Vitest matcher returns. */
interface MatcherResult {
  pass: boolean;
  message: () => string;
}

/** The part of the runner's matcher context the matchers read (`this.isNot`). */
interface MatcherContext {
  isNot?: boolean;
}

/**
 * The matchers' types, to add to your runner's `expect` (see docs/testing-your-app.md):
 * `interface Matchers<R> extends EmailMatchers<R> {}` in Jest, `interface Assertion<T> extends EmailMatchers<T> {}` in Vitest.
 * @publicApi
 */
export interface EmailMatchers<R = unknown> {
  /** At least one message matches (any message when `match` is left out). */
  toHaveSent(match?: SandboxMessageMatch): R;
  /** At least one message to `address` (and matching `match`, when given). */
  toHaveSentTo(address: string | RegExp, match?: SandboxMessageMatch): R;
  /** Exactly `times` messages match. */
  toHaveSentTimes(times: number, match?: SandboxMessageMatch): R;
}

/**
 * The messages of a source, oldest first. A source whose `sent()` is asynchronous (a
 * `RemoteSandboxMailbox`) cannot be read by a synchronous matcher: that is a `TypeError` saying what to
 * write instead, never a pass.
 */
export function messagesOf(source: SandboxMessageSource, where = 'the matcher'): SandboxSentMessage[] {
  if (Array.isArray(source)) return [...(source as SandboxSentMessage[])];
  if (source && typeof (source as { sent?: unknown }).sent === 'function') {
    const sent: unknown = (source as { sent(): unknown }).sent();
    if (Array.isArray(sent)) return sent as SandboxSentMessage[];
    if (typeof (sent as { then?: unknown } | null)?.then === 'function') {
      (sent as Promise<unknown>).catch(() => undefined); // read elsewhere; not left unhandled
      throw new TypeError(
        `${where} reads messages at once, and this mailbox's sent() answers later (a RemoteSandboxMailbox, ` +
          `in another process): write expect(await mailbox.sent()).toHaveSent(...), or use waitForMessage(mailbox, ...)`,
      );
    }
  }
  throw new TypeError(
    `${where} expected a SandboxMailbox, an EmailSandbox or an array of its sent() messages (got ${describe(source)})`,
  );
}

const matching = (messages: SandboxSentMessage[], match: SandboxMessageMatch) =>
  messages.filter((m) => mismatch(m, match) === null);

function result(pass: boolean, isNot: boolean | undefined, expected: string, sent: string): MatcherResult {
  return {
    pass,
    message: () =>
      isNot
        ? `Expected no message ${expected}, but one was:\n${sent}`
        : `Expected a message ${expected}, but none was. Sent instead:\n${sent}`,
  };
}

/**
 * Matchers for Jest and Vitest, registered once with `expect.extend(emailMatchers)`. They read any
 * `SandboxMessageSource`; a failure lists what was sent instead (the last 10 messages, each with the
 * first field that did not match). They import nothing from either runner.
 *
 * @example
 * expect.extend(emailMatchers);
 * expect(mailbox).toHaveSent({ to: 'ada@example.org', subject: 'Welcome, Ada' });
 * expect(mailbox).toHaveSentTimes(1, { templateId: 1 });
 * @publicApi
 */
export const emailMatchers = {
  toHaveSent(
    this: MatcherContext,
    received: SandboxMessageSource,
    given?: SandboxMessageMatch,
  ): MatcherResult {
    const match = checkMatch(given, 'toHaveSent');
    const all = messagesOf(received, 'toHaveSent');
    const found = matching(all, match);
    const shown = this.isNot ? found : all;
    return result(found.length > 0, this.isNot, `matching ${describeMatch(match)}`, listSent(shown, match));
  },

  toHaveSentTo(
    this: MatcherContext,
    received: SandboxMessageSource,
    address: string | RegExp,
    given?: SandboxMessageMatch,
  ): MatcherResult {
    const match = checkMatch(given, 'toHaveSentTo');
    if (typeof address !== 'string' && !(address instanceof RegExp)) {
      throw new TypeError(`toHaveSentTo needs an address, a string or a RegExp (got ${describe(address)})`);
    }
    const all = messagesOf(received, 'toHaveSentTo');
    const found = matching(all, match).filter((m) => m.toAddresses.some((to) => addressMatches(to, address)));
    const expected = `to ${describe(address)}${Object.keys(match).length ? ` matching ${describeMatch(match)}` : ''}`;
    const full = { ...match, to: [address, ...(match.to === undefined ? [] : [match.to].flat())] };
    return result(found.length > 0, this.isNot, expected, listSent(this.isNot ? found : all, full));
  },

  toHaveSentTimes(
    this: MatcherContext,
    received: SandboxMessageSource,
    times: number,
    given?: SandboxMessageMatch,
  ): MatcherResult {
    if (!Number.isInteger(times) || times < 0)
      throw new TypeError('toHaveSentTimes needs a count of 0 or more');
    const match = checkMatch(given, 'toHaveSentTimes');
    const all = messagesOf(received, 'toHaveSentTimes');
    const found = matching(all, match);
    const what = `${times} message${times === 1 ? '' : 's'} matching ${describeMatch(match)}`;
    return {
      pass: found.length === times,
      message: () =>
        this.isNot
          ? `Expected other than ${what}, and exactly that many were sent:\n${listSent(found, match)}`
          : `Expected ${what}, but ${found.length} matched. Sent:\n${listSent(all, match)}`,
    };
  },
};
