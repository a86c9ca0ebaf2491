import {
  codesIn,
  linksOf,
  type SandboxBodies,
  type SandboxCodeOptions,
  type SandboxLink,
} from './sandbox.links.js';
import type { SandboxSentMessage } from './sandbox.mailbox.js';
import {
  addressMatches,
  codeMatches,
  describe,
  describeLink,
  describeMatch,
  linkMatches,
  listSent,
  mismatch,
  type SandboxLinkMatch,
  type SandboxMessageMatch,
  type SandboxTextMatch,
} from './sandbox.match.js';
import { messagesOf, type SandboxMessageSource } from './sandbox.matchers.js';
import { checkLinkMatch, checkMatch } from './sandbox.criteria.js';

/**
 * Options of `waitForMessage`.
 * @publicApi
 */
export interface SandboxWaitOptions {
  /** How long to wait before failing. @default 5000 */
  timeoutMs?: number;
  /** How often to look. @default 20 */
  intervalMs?: number;
  /** Gives up early when aborted. */
  signal?: AbortSignal;
}

/**
 * Waits until a message matching `match` is in the source (any message when left out) and returns the
 * newest such message; rejects after `timeoutMs` with an error that lists what was sent instead.
 * For any test runner (or none): it only polls the source.
 *
 * @example
 * const mail = await waitForMessage(mailbox, { to: 'ada@example.org' }, { timeoutMs: 2000 });
 * @publicApi
 */
export function waitForMessage(
  source: SandboxMessageSource | { sent(): Promise<SandboxSentMessage[]> },
  given?: SandboxMessageMatch,
  options: SandboxWaitOptions = {},
): Promise<SandboxSentMessage> {
  let match: SandboxMessageMatch;
  try {
    match = checkMatch(given, 'waitForMessage');
  } catch (err) {
    return Promise.reject(err as Error);
  }
  const timeoutMs = options.timeoutMs ?? 5000;
  const intervalMs = options.intervalMs ?? 20;
  const started = Date.now();
  return new Promise((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    let done = false;
    const stop = () => {
      done = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
    };
    const onAbort = () => {
      stop();
      reject(options.signal?.reason ?? new Error('waitForMessage aborted'));
    };
    const look = async () => {
      let all: SandboxSentMessage[];
      try {
        const remote = !Array.isArray(source) && typeof (source as { sent?: unknown })?.sent === 'function';
        all = remote
          ? await (source as { sent(): SandboxSentMessage[] | Promise<SandboxSentMessage[]> }).sent()
          : messagesOf(source as SandboxMessageSource, 'waitForMessage');
      } catch (err) {
        stop();
        return reject(err);
      }
      if (done) return;
      const found = all.filter((m) => mismatch(m, match) === null);
      if (found.length > 0) {
        stop();
        return resolve(found[found.length - 1]);
      }
      if (Date.now() - started >= timeoutMs) {
        stop();
        return reject(
          new Error(
            `No message matching ${describeMatch(match)} arrived within ${timeoutMs} ms. Sent instead:\n${listSent(all, match)}`,
          ),
        );
      }
      timer = setTimeout(() => void look(), intervalMs);
    };
    if (options.signal?.aborted) return onAbort();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    void look();
  });
}

/**
 * The newest message sent to `address` (bare address, case-insensitive; or a RegExp), or undefined.
 *
 * @example
 * const mail = lastMessageTo(mailbox, 'ada@example.org');
 * @publicApi
 */
export function lastMessageTo(
  source: SandboxMessageSource,
  address: string | RegExp,
): SandboxSentMessage | undefined {
  if (typeof address !== 'string' && !(address instanceof RegExp)) {
    throw new TypeError(`lastMessageTo needs an address, a string or a RegExp (got ${describe(address)})`);
  }
  const all = messagesOf(source, 'lastMessageTo');
  for (let i = all.length - 1; i >= 0; i--) {
    if (all[i].toAddresses.some((to) => addressMatches(to, address))) return all[i];
  }
  return undefined;
}

/**
 * The URLs of a message's links (`linksOf`): its html's `<a href>`s in order, entities decoded, as your app
 * wrote them (links rewritten for click tracking come back as their destinations: fetching a tracked link
 * would record a click), then the URLs of its text body the html did not already give. Given a string:
 * its anchors' hrefs when it holds an `<a>` tag, else the URLs written out in it.
 *
 * @example
 * const [confirm] = linksIn(lastMessageTo(mailbox, 'ada@example.org')!);
 * @publicApi
 */
export function linksIn(message: SandboxBodies | string | null | undefined): string[] {
  return linksOf(message).map((l) => l.url);
}

/** The first http(s) link: what "its link" means when a test names none. */
export const ANY_WEB_LINK = /^https?:\/\//i;

function describeLinks(links: SandboxLink[]): string {
  if (links.length === 0) return '  (no link)';
  return links
    .map((l) => `  ${l.url}${l.text === null ? ' (in the text)' : l.text ? `  "${l.text}"` : ''}`)
    .join('\n');
}

/** How a message is named in an error: `#3 "Reset your password"`, or "the message". */
const named = (message: SandboxBodies & { id?: unknown }) =>
  `${typeof message.id === 'number' ? `#${message.id} ` : ''}${JSON.stringify(message.subject ?? '')}`;

/**
 * The URL of the first link of a message that matches `link` (`SandboxLinkMatch`: a string contained in
 * the URL, a RegExp, a matcher, or `{ url, text }` with the anchor's text), or of its first http(s) link
 * when `link` is left out. Throws an error that lists the message's links when none matches.
 *
 * @example
 * const reset = linkIn(mail, { text: 'Reset your password' });
 * const confirm = linkIn(mail, /\/confirm\?token=/);
 * @publicApi
 */
export function linkIn(message: SandboxBodies & { id?: unknown }, link?: SandboxLinkMatch): string {
  const want = link === undefined ? ANY_WEB_LINK : checkLinkMatch(link, 'linkIn');
  if (typeof message !== 'object' || message === null) {
    throw new TypeError(`linkIn needs a message, such as one of mailbox.sent() (got ${describe(message)})`);
  }
  const links = linksOf(message);
  const found = links.find((l) => linkMatches(l, want));
  if (found) return found.url;
  throw new Error(
    `The message ${named(message)} has no link ${link === undefined ? 'to a web page (http or https)' : `matching ${describeLink(want)}`}. Its links:\n${describeLinks(links)}`,
  );
}

/** The first code of `message` that matches `want` (any with `true`), or undefined. */
function pickCode(
  message: SandboxBodies,
  want: true | SandboxTextMatch,
  pattern?: RegExp,
): string | undefined {
  return codesIn(message, { pattern }).find((c) => codeMatches(c, want));
}

/**
 * The code of a message (see `codesIn`): the first one found, with your app's `pattern` when given.
 * Throws an error naming where it looked and with which pattern when there is none.
 *
 * @example
 * const code = codeIn(mail); // '482913'
 * const code = codeIn(mail, { pattern: /\b[A-Z]{3}-\d{3}\b/ });
 * @publicApi
 */
export function codeIn(message: SandboxBodies & { id?: unknown }, options: SandboxCodeOptions = {}): string {
  if (typeof message !== 'object' || message === null) {
    throw new TypeError(`codeIn needs a message, such as one of mailbox.sent() (got ${describe(message)})`);
  }
  const code = pickCode(message, true, options.pattern);
  if (code !== undefined) return code;
  const how = options.pattern ? `matching ${String(options.pattern)}` : 'of 4 to 8 digits standing alone';
  throw new Error(
    `The message ${named(message)} has no code ${how} in its subject, text or html (links left out). ` +
      "Give your code's pattern: codeIn(message, { pattern: /.../ }).",
  );
}

/**
 * Waits for a message matching `match` that has a link (the one `match.link` names, else any http(s)
 * link) and returns that link's URL: "wait for the reset mail to Ada and give me its link" in one line.
 * Rejects after `timeoutMs` listing what was sent instead. Reads any source `waitForMessage` reads, a
 * `RemoteSandboxMailbox` too.
 *
 * @example
 * const url = await waitForLink(mailbox, { to: 'ada@example.org', subject: /reset/i });
 * const url = await waitForLink(mailbox, { to: 'ada@example.org', link: { text: 'Confirm' } });
 * @publicApi
 */
export async function waitForLink(
  source: SandboxMessageSource | { sent(): Promise<SandboxSentMessage[]> },
  match: SandboxMessageMatch = {},
  options: SandboxWaitOptions = {},
): Promise<string> {
  const given = checkMatch(match, 'waitForLink');
  const found = await waitForMessage(source, { ...given, link: given.link ?? ANY_WEB_LINK }, options);
  return linkIn(found, given.link);
}

/**
 * Waits for a message matching `match` that has a code (the one `match.code` names, found with
 * `match.codePattern` when given) and returns the code.
 *
 * @example
 * const code = await waitForCode(mailbox, { to: 'ada@example.org', subject: 'Your login code' });
 * const code = await waitForCode(mailbox, { to: 'ada@example.org', codePattern: /\b[A-Z]{3}-\d{3}\b/ });
 * @publicApi
 */
export async function waitForCode(
  source: SandboxMessageSource | { sent(): Promise<SandboxSentMessage[]> },
  match: SandboxMessageMatch = {},
  options: SandboxWaitOptions = {},
): Promise<string> {
  const given = checkMatch(match, 'waitForCode');
  const found = await waitForMessage(source, { ...given, code: given.code ?? true }, options);
  return pickCode(found, given.code ?? true, given.codePattern) as string;
}
