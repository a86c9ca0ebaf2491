import { randomBytes } from 'node:crypto';
import type { SandboxReply } from './sandbox.http.js';
import type { SandboxEmailEvent } from './sandbox.records.js';
import type { SandboxStore, StoredMessage } from './sandbox.store.js';

/** Path under the base path where tracking pixels and click redirects are served. */
export const TRACKING_PATH = '/__sandbox/track/';

const LINK = /(<a\b[^>]*?\bhref\s*=\s*)(["'])(https?:\/\/[^"']*)\2/gi;
const PIXEL_GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');
const NO_STORE = { 'cache-control': 'no-store' };

/**
 * Adds tracking to a stored message's html: rewrites its http(s) links through the click redirect
 * and appends the open pixel (before `</body>` when there is one), as the flags ask.
 *
 * @example
 * instrument(msg, 'http://127.0.0.1:4010/__sandbox/track/');
 */
export function instrument(msg: StoredMessage, trackingBase: string): void {
  const html = msg.detail.html;
  if (html === null || (!msg.opensApply && !msg.clicksApply)) return;
  const token = randomBytes(8).toString('hex');
  const prefix = `${trackingBase}${msg.detail.id}/${token}`;
  let out = html;
  if (msg.clicksApply) {
    out = out.replace(LINK, (_m, start: string, quote: string, href: string) => {
      msg.links.push(href.replace(/&amp;/g, '&'));
      return `${start}${quote}${prefix}/click/${msg.links.length - 1}${quote}`;
    });
  }
  if (msg.opensApply) {
    const pixel = `<img src="${prefix}/open.gif" width="1" height="1" alt="" style="display:none">`;
    const end = out.search(/<\/body>/i);
    out = end < 0 ? out + pixel : out.slice(0, end) + pixel + out.slice(end);
  }
  msg.token = token;
  msg.detail.html = out;
}

/** Why an event cannot be recorded for a message, or null when it can. */
export function trackingRefusal(msg: StoredMessage, type: 'open' | 'click'): string | null {
  if (type === 'open' ? !msg.opensApply : !msg.clicksApply) {
    const flag = type === 'open' ? 'trackOpens' : 'trackClicks';
    const why = !msg.detail[flag]
      ? `${flag} was off for it (the send set it false, or left it out and the account default is off)`
      : 'it has no html body, and tracking needs one';
    return `${type} tracking does not apply to email ${msg.detail.id}: ${why}`;
  }
  if (msg.detail.status === 'scheduled') return `email ${msg.detail.id} is still scheduled`;
  return null;
}

/** Records an event when tracking applies; returns it, or null when nothing was recorded. */
export function record(
  store: SandboxStore,
  msg: StoredMessage,
  type: 'open' | 'click',
  url: string | null,
  now: number,
): SandboxEmailEvent | null {
  return trackingRefusal(msg, type) ? null : store.addEvent(msg, type, url, now);
}

/**
 * Serves `<id>/<token>/open.gif` (a 1x1 gif, records an open) and `<id>/<token>/click/<n>`
 * (records a click, redirects to the original link). Unknown ids, tokens or links give 404.
 */
export function handleTracking(rest: string, store: SandboxStore, now: number): SandboxReply {
  const [idText, token, kind, index] = rest.split('/');
  const msg = store.get(Number(idText));
  if (!msg || msg.token === null || msg.token !== token) return notFound();
  if (kind === 'open.gif') {
    record(store, msg, 'open', null, now);
    return { status: 200, raw: PIXEL_GIF, headers: { 'content-type': 'image/gif', ...NO_STORE } };
  }
  const url = kind === 'click' ? msg.links[Number(index)] : undefined;
  if (url === undefined) return notFound();
  record(store, msg, 'click', url, now);
  return { status: 302, headers: { location: url, ...NO_STORE } };
}

const notFound = (): SandboxReply => ({ status: 404, body: { error: 'unknown tracking link' } });
