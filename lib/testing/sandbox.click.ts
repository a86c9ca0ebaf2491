import { linksOf, type SandboxBodies } from './sandbox.links.js';
import type { SandboxLinkMatch } from './sandbox.match.js';
import { linkIn } from './sandbox.wait.js';

/**
 * What `clickLink` did.
 * @publicApi
 */
export interface SandboxClick {
  /** The link's destination, as the app wrote it. */
  url: string;
  /**
   * Whether the sandbox's click tracking had rewritten the link: then the click went through the sandbox,
   * which recorded it (a click event, `clickCount`) and redirected to `url`, as a mail client's click does.
   */
  tracked: boolean;
  /**
   * The destination's answer, redirects followed (your app's page, say). With `follow: false`: the
   * sandbox's redirect itself (302 to `url`), or, for an untracked link, null (nothing was fetched).
   */
  response: Response | null;
}

/**
 * Options of `clickLink`.
 * @publicApi
 */
export interface SandboxClickOptions {
  /** Fetch the destination after the sandbox's redirect. @default true */
  follow?: boolean;
  /** Headers for the destination's request (a session cookie, say); the sandbox's never gets them. */
  headers?: Record<string, string>;
  /** Gives up when aborted. */
  signal?: AbortSignal;
}

type Linked = SandboxBodies & { id?: unknown };

/** `<a ...href="x">` of html, in order (entities left as written: pairs are compared as written). */
const hrefs = (html: string | null | undefined): string[] => (html ? linksOf(html).map((l) => l.url) : []);

/**
 * The tracked URL of `destination` in a message: the delivered html (`html`, rewritten by click tracking)
 * and the html as sent (`sentHtml`) have the same anchors in the same order, the tracked ones pointing at
 * the sandbox's `/__sandbox/track/` route.
 */
function trackedUrlOf(message: Linked, destination: string): string | null {
  const delivered = hrefs(message.html);
  const sent = hrefs(message.sentHtml);
  if (delivered.length !== sent.length) return null;
  for (let i = 0; i < sent.length; i++) {
    if (sent[i] === destination && /\/__sandbox\/track\/.+\/click\/\d+$/.test(delivered[i]))
      return delivered[i];
  }
  return null;
}

/**
 * Clicks a link of a message as its recipient would: the link `link` names (`SandboxLinkMatch`; the first
 * http(s) link when left out). When the sandbox's click tracking rewrote it, the request goes to the
 * sandbox's tracking URL, which records the click and redirects to the destination; the destination is then
 * fetched (redirects followed) and its answer returned. An untracked link is fetched directly. Works on
 * any message of `sent()`, a `RemoteSandboxMailbox`'s too.
 *
 * @example
 * const mail = await waitForMessage(mailbox, { to: 'ada@example.org', subject: /confirm/i });
 * const { response } = await clickLink(mail, { text: 'Confirm your address' });
 * expect(response?.status).toBe(200); // your app's confirmation page
 * expect(mailbox.events(mail.id)[0]).toMatchObject({ type: 'click' });
 * @publicApi
 */
export async function clickLink(
  message: Linked,
  link?: SandboxLinkMatch,
  options: SandboxClickOptions = {},
): Promise<SandboxClick> {
  const url = linkIn(message, link);
  const tracked = trackedUrlOf(message, url);
  const follow = options.follow ?? true;
  if (tracked === null) {
    const response = follow ? await fetch(url, { headers: options.headers, signal: options.signal }) : null;
    return { url, tracked: false, response };
  }
  const hop = await fetch(tracked, { redirect: 'manual', signal: options.signal });
  const location = hop.headers.get('location');
  if (hop.status !== 302 || location !== url) {
    const said = await hop.text().catch(() => '');
    throw new Error(
      `The sandbox did not redirect the tracked link of ${url} (answered ${hop.status}${said ? `: ${said}` : ''}); ` +
        'was the message reset or forgotten?',
    );
  }
  if (!follow) return { url, tracked: true, response: hop };
  await hop.body?.cancel();
  const response = await fetch(url, { headers: options.headers, signal: options.signal });
  return { url, tracked: true, response };
}
