import type { SandboxSentMessage } from './sandbox.mailbox.js';
import {
  addressMatches,
  describeMatch,
  listSent,
  mismatch,
  type SandboxMessageMatch,
} from './sandbox.match.js';
import { messagesOf, type SandboxMessageSource } from './sandbox.matchers.js';
import { checkMatch } from './sandbox.criteria.js';
import { describe } from './sandbox.match.js';

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

const HREF = /<a\b[^>]*?\bhref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))/gi;
const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", '#39': "'" };

/**
 * The links (`<a href>`) of a message's html, in order, entities decoded. Given a message, it reads
 * the html as the app sent it, so links rewritten for click tracking come back as their original
 * destinations (fetching a tracked link would record a click). Given a string, the hrefs as written.
 *
 * @example
 * const [confirm] = linksIn(lastMessageTo(mailbox, 'ada@example.org')!);
 * @publicApi
 */
export function linksIn(message: SandboxSentMessage | string | null | undefined): string[] {
  const html = typeof message === 'string' ? message : (message?.sentHtml ?? '');
  return [...html.matchAll(HREF)].map((m) =>
    (m[1] ?? m[2] ?? m[3]).replace(/&(amp|lt|gt|quot|apos|#39);/g, (_e, n: string) => ENTITIES[n]),
  );
}
