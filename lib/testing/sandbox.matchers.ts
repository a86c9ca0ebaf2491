import type { SandboxSentMessage } from './sandbox.mailbox.js';
import {
  addressMatches,
  describe,
  describeMatch,
  listSent,
  codeMatches,
  describeLink,
  linkMatches,
  mismatch,
  type SandboxLinkMatch,
  type SandboxMessageMatch,
  type SandboxTextMatch,
} from './sandbox.match.js';
import { checkLinkMatch, checkMatch } from './sandbox.criteria.js';
import { codesIn, linksOf, type SandboxBodies, type SandboxCodeOptions } from './sandbox.links.js';

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
  /**
   * At least one message matching `match` has a link matching `link` (any http(s) link when left out):
   * `expect(mailbox).toHaveSentLink(/\/reset\?token=/, { to: 'ada@example.org' })`.
   */
  toHaveSentLink(link?: SandboxLinkMatch, match?: SandboxMessageMatch): R;
  /**
   * At least one message matching `match` has a code (`match.code` and `match.codePattern` say which):
   * `expect(mailbox).toHaveSentCode({ to: 'ada@example.org' })`.
   */
  toHaveSentCode(match?: SandboxMessageMatch): R;
  /** The message (one of `sent()`) has a link matching `link`, any http(s) link when left out. */
  toContainLink(link?: SandboxLinkMatch): R;
  /** The message has a code (equal to `code`, or matching it, when given), found with `options.pattern`. */
  toContainCode(code?: SandboxTextMatch, options?: SandboxCodeOptions): R;
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

/** The first http(s) link: what a link matcher looks for when given no link. */
const ANY_WEB_LINK = /^https?:\/\//i;

/** The message a message-level matcher was given; a `TypeError` saying what to write for anything else. */
function messageOf(received: unknown, where: string): SandboxBodies & { id?: unknown } {
  const isSource =
    Array.isArray(received) || typeof (received as { sent?: unknown } | null)?.sent === 'function';
  const isMessage =
    typeof received === 'object' &&
    received !== null &&
    !isSource &&
    ['html', 'sentHtml', 'bodyText', 'subject'].some((k) => k in received);
  if (isMessage) return received as SandboxBodies & { id?: unknown };
  const instead = where === 'toContainLink' ? 'toHaveSentLink(link, match)' : 'toHaveSentCode(match)';
  throw new TypeError(
    `${where} reads one message, such as one of mailbox.sent() or what waitForMessage gives` +
      (isSource ? `; for a mailbox, write expect(mailbox).${instead}` : ` (got ${describe(received)})`),
  );
}

const named = (m: SandboxBodies & { id?: unknown }) =>
  `the message ${typeof m.id === 'number' ? `#${m.id} ` : ''}${JSON.stringify(m.subject ?? '')}`;

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

  toHaveSentLink(
    this: MatcherContext,
    received: SandboxMessageSource,
    link?: SandboxLinkMatch,
    given?: SandboxMessageMatch,
  ): MatcherResult {
    const match = checkMatch(given, 'toHaveSentLink');
    if (match.link !== undefined)
      throw new TypeError('toHaveSentLink: give the link as its first argument, not as a link criterion');
    const want = link === undefined ? ANY_WEB_LINK : checkLinkMatch(link, 'toHaveSentLink');
    const full = { ...match, link: want };
    const all = messagesOf(received, 'toHaveSentLink');
    const found = matching(all, full);
    const which = link === undefined ? 'a link to a web page' : `a link matching ${describeLink(want)}`;
    const rest = Object.keys(match).length ? ` among messages matching ${describeMatch(match)}` : '';
    return result(
      found.length > 0,
      this.isNot,
      `with ${which}${rest}`,
      listSent(this.isNot ? found : all, full),
    );
  },

  toHaveSentCode(
    this: MatcherContext,
    received: SandboxMessageSource,
    given?: SandboxMessageMatch,
  ): MatcherResult {
    const match = checkMatch(given, 'toHaveSentCode');
    const full = { ...match, code: match.code ?? true };
    const all = messagesOf(received, 'toHaveSentCode');
    const found = matching(all, full);
    return result(
      found.length > 0,
      this.isNot,
      `with a code matching ${describeMatch(full)}`,
      listSent(this.isNot ? found : all, full),
    );
  },

  toContainLink(this: MatcherContext, received: unknown, link?: SandboxLinkMatch): MatcherResult {
    const want = link === undefined ? ANY_WEB_LINK : checkLinkMatch(link, 'toContainLink');
    const message = messageOf(received, 'toContainLink');
    const links = linksOf(message);
    const hits = links.filter((l) => linkMatches(l, want));
    const which = link === undefined ? 'a link to a web page' : `a link matching ${describeLink(want)}`;
    const shown = (list: typeof links) =>
      list.length
        ? list
            .map((l) => `  ${l.url}${l.text ? `  "${l.text}"` : l.text === null ? ' (in the text)' : ''}`)
            .join('\n')
        : '  (no link)';
    return {
      pass: hits.length > 0,
      message: () =>
        this.isNot
          ? `Expected ${named(message)} to have no ${which.slice(2)}, but it has:\n${shown(hits)}`
          : `Expected ${named(message)} to contain ${which}. Its links:\n${shown(links)}`,
    };
  },

  toContainCode(
    this: MatcherContext,
    received: unknown,
    code?: SandboxTextMatch,
    options: SandboxCodeOptions = {},
  ): MatcherResult {
    if (
      code !== undefined &&
      !(
        typeof code === 'string' ||
        code instanceof RegExp ||
        typeof (code as { asymmetricMatch?: unknown })?.asymmetricMatch === 'function'
      )
    )
      throw new TypeError(
        `toContainCode: the code must be a string, a RegExp or an asymmetric matcher (got ${describe(code)})`,
      );
    const message = messageOf(received, 'toContainCode');
    const codes = codesIn(message, options);
    const want = code ?? true;
    const hits = codes.filter((c) => codeMatches(c, want));
    const which = `a code${code === undefined ? '' : ` matching ${describe(code)}`}${options.pattern ? ` (pattern ${String(options.pattern)})` : ''}`;
    return {
      pass: hits.length > 0,
      message: () =>
        this.isNot
          ? `Expected ${named(message)} to have no ${which.slice(2)}, but it has ${hits.join(', ')}`
          : `Expected ${named(message)} to contain ${which}. Codes found: ${codes.length ? codes.join(', ') : 'none'}`,
    };
  },
};
