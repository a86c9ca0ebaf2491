import { codesIn, linksOf, type SandboxLink } from './sandbox.links.js';
import type { SandboxSentMessage } from './sandbox.mailbox.js';

/**
 * How a field is matched: a string (exactly, or as a substring for `text` and `html`; see
 * `SandboxMessageMatch`), a RegExp (tested), or an asymmetric matcher of your runner such as
 * `expect.stringContaining('x')` (anything with an `asymmetricMatch` method).
 * @publicApi
 */
export type SandboxTextMatch = string | RegExp | SandboxAsymmetricMatch;

/**
 * An asymmetric matcher of your runner (`expect.any(Number)`, `expect.anything()`,
 * `expect.objectContaining(...)`, `expect.arrayContaining(...)`): anything with an `asymmetricMatch`
 * method. Every criterion takes one in place of its value.
 * @publicApi
 */
export interface SandboxAsymmetricMatch {
  asymmetricMatch(value: unknown): boolean;
}

/**
 * What a sent message should look like; every field given must match, the rest is ignored. A key the
 * matchers do not know (a misspelling, a field they cannot check) fails the assertion with a message
 * naming it and the keys accepted; so does a value left undefined or an empty list. The record's own
 * field names are accepted for the criteria they stand for: `toAddresses` (`to`), `fromAddress`
 * (`from`), `bodyText` (`text`), `sentHtml` (`html`).
 * - `subject`, `from`, `status`, attachment `filename` and `contentType`, and template variable
 *   values: a string must be **equal** (case-sensitive).
 * - `to` and `from` compare addresses: `'ada@example.org'` matches `Ada <ada@example.org>`, case-insensitively.
 * - `text` and `html`: a string only needs to be **contained** (bodies are long). `html` is the html
 *   as the app sent it, before the sandbox's tracking added a pixel and rewrote the links.
 * - A RegExp is tested; an asymmetric matcher is asked, wherever a value goes: `templateId:
 *   expect.any(Number)`, `variables: expect.objectContaining({ name: 'Ada' })`, `attachments:
 *   expect.arrayContaining([...])` or one entry, an attachment's `content`; for `to`, a matcher is asked
 *   about each recipient and about the whole list (`expect.arrayContaining([...])`).
 *
 * @example
 * { to: 'ada@example.org', subject: /welcome/i, variables: { name: 'Ada' } }
 * @publicApi
 */
export interface SandboxMessageMatch {
  /** Each address listed must be among the recipients. */
  to?: SandboxTextMatch | SandboxTextMatch[];
  from?: SandboxTextMatch;
  subject?: SandboxTextMatch;
  /** The text body (substring for a string). */
  text?: SandboxTextMatch;
  /** The html body as the app sent it, before tracking rewrote it (substring for a string). */
  html?: SandboxTextMatch;
  templateId?: number | SandboxAsymmetricMatch;
  /** The variables listed must be given with these values; others may be present too. */
  variables?: Record<string, SandboxTextMatch> | SandboxAsymmetricMatch;
  /** Each entry must match a different attachment, in any order; `content` compares the decoded bytes. */
  attachments?:
    | Array<
        | {
            filename?: SandboxTextMatch;
            contentType?: SandboxTextMatch;
            content?: string | Buffer | SandboxAsymmetricMatch;
          }
        | SandboxAsymmetricMatch
      >
    | SandboxAsymmetricMatch;
  status?: SandboxTextMatch;
  /** The record's name of `to`. */
  toAddresses?: SandboxTextMatch | SandboxTextMatch[];
  /** The record's name of `from`. */
  fromAddress?: SandboxTextMatch;
  /** The record's name of `text`. */
  bodyText?: SandboxTextMatch;
  /** The record's name of `html` (as the app sent it). */
  sentHtml?: SandboxTextMatch;
  /**
   * One of the message's links (`linksOf`: its html's anchors and its text's URLs) must match: a string is
   * contained in the URL, a RegExp or a matcher is asked about the URL, `{ url, text }` about the URL and
   * the anchor's text (each contained for a string).
   */
  link?: SandboxLinkMatch;
  /**
   * One of the message's codes (`codesIn`) must match: `true` for any code, a string equal to it, a RegExp
   * or a matcher. Found with `codePattern` when given.
   */
  code?: true | SandboxTextMatch;
  /** The app's own pattern of a code (see `SandboxCodeOptions.pattern`); alone, a code of it must be there. */
  codePattern?: RegExp;
}

/**
 * Which link: a string contained in its URL, a RegExp or an asymmetric matcher asked about its URL (a
 * matcher is also asked about the whole `SandboxLink`), or `{ url, text }` for its URL and its anchor text.
 *
 * @example
 * linkIn(mail, { text: 'Reset your password' })
 * linkIn(mail, /\/reset\?token=/)
 * @publicApi
 */
export type SandboxLinkMatch = SandboxTextMatch | { url?: SandboxTextMatch; text?: SandboxTextMatch };

type Asymmetric = SandboxAsymmetricMatch;
const isAsymmetric = (m: unknown): m is Asymmetric =>
  typeof m === 'object' && m !== null && typeof (m as Asymmetric).asymmetricMatch === 'function';

/** Whether a value matches a criterion that is not text: an asymmetric matcher is asked, else equal. */
function valueMatches(value: unknown, want: unknown): boolean {
  return isAsymmetric(want) ? want.asymmetricMatch(value) : Object.is(value, want);
}

/** Whether a value matches: equal (or contained, with `contains`), a RegExp's test, or an asymmetric matcher. */
export function textMatches(value: string | null, want: SandboxTextMatch, contains = false): boolean {
  if (isAsymmetric(want)) return want.asymmetricMatch(value);
  if (value === null) return false;
  if (want instanceof RegExp) {
    want.lastIndex = 0;
    return want.test(value);
  }
  return contains ? value.includes(want) : value === want;
}

const BARE = /<\s*([^<>\s]+)\s*>\s*$/;
/** The bare address of `addr` or `Name <addr>`, lower case. */
export const bareAddress = (value: string): string => (BARE.exec(value)?.[1] ?? value).trim().toLowerCase();

/** Whether an address field matches: a string compares bare addresses, case-insensitively. */
export function addressMatches(value: string, want: SandboxTextMatch): boolean {
  if (typeof want === 'string') return bareAddress(value) === bareAddress(want) || value === want;
  return textMatches(value, want) || textMatches(bareAddress(value), want);
}

/**
 * The first field of `match` that `msg` fails, as a short phrase, or null when it matches. `match` is
 * one `checkMatch` returned (aliases resolved, every value checked).
 */
export function mismatch(msg: SandboxSentMessage, match: SandboxMessageMatch): string | null {
  if (match.to !== undefined) {
    const wanted = Array.isArray(match.to) ? match.to : [match.to];
    const list = [...msg.toAddresses];
    const missing = wanted.find(
      (w) =>
        !list.some((to) => addressMatches(to, w)) &&
        !(wanted.length === 1 && isAsymmetric(w) && w.asymmetricMatch(list)),
    );
    if (missing !== undefined) return `not to ${describe(missing)}`;
  }
  if (match.from !== undefined && !addressMatches(msg.fromAddress, match.from)) return 'from differs';
  if (match.subject !== undefined && !textMatches(msg.subject, match.subject)) return 'subject differs';
  if (match.text !== undefined && !textMatches(msg.bodyText, match.text, true)) return 'text differs';
  if (match.html !== undefined && !textMatches(msg.sentHtml, match.html, true)) return 'html differs';
  if (match.status !== undefined && !textMatches(msg.status, match.status)) return 'status differs';
  if (match.templateId !== undefined && !valueMatches(msg.templateId, match.templateId)) {
    return msg.templateId === null ? 'no template' : `template ${msg.templateId}`;
  }
  if (isAsymmetric(match.variables)) {
    if (!match.variables.asymmetricMatch(msg.variables === null ? null : { ...msg.variables }))
      return 'variables differ';
  } else
    for (const [name, want] of Object.entries(match.variables ?? {})) {
      // Own values only: `constructor` or `toString` of the prototype is no variable of the message.
      const got =
        msg.variables !== null && Object.hasOwn(msg.variables, name) ? msg.variables[name] : undefined;
      if (got === undefined) return `no variable ${name}`;
      if (!textMatches(got, want)) return `variable ${name} is ${JSON.stringify(got)}`;
    }
  if (match.attachments !== undefined) {
    const why = attachmentsMismatch(msg, match.attachments);
    if (why !== null) return why;
  }
  if (match.link !== undefined) {
    const links = linksOf(msg);
    if (!links.some((l) => linkMatches(l, match.link as SandboxLinkMatch)))
      return links.length
        ? `no link like ${describeLink(match.link)} (links: ${shortList(links.map((l) => l.url))})`
        : 'no link';
  }
  if (match.code !== undefined || match.codePattern !== undefined) {
    const codes = codesIn(msg, { pattern: match.codePattern });
    const want = match.code ?? true;
    if (!codes.some((c) => codeMatches(c, want)))
      return codes.length ? `no code like ${describe(want)} (codes: ${shortList(codes)})` : 'no code';
  }
  return null;
}

const shortList = (items: string[]) =>
  items.length > 3 ? `${items.slice(0, 3).join(', ')}, … ${items.length - 3} more` : items.join(', ');

/** Whether a link matches what a link criterion asks (see `SandboxLinkMatch`). */
export function linkMatches(link: SandboxLink, want: SandboxLinkMatch): boolean {
  if (isAsymmetric(want)) return want.asymmetricMatch(link.url) || want.asymmetricMatch({ ...link });
  if (typeof want === 'string' || want instanceof RegExp) return textMatches(link.url, want, true);
  return (
    (want.url === undefined || textMatches(link.url, want.url, true)) &&
    (want.text === undefined || textMatches(link.text, want.text, true))
  );
}

/** Whether a code matches what a code criterion asks: `true` for any, else as text (a string: equal). */
export function codeMatches(code: string, want: true | SandboxTextMatch): boolean {
  return want === true || textMatches(code, want);
}

/** A link criterion as a failure message shows it. */
export function describeLink(want: SandboxLinkMatch): string {
  return isPlain(want) ? describeMatch(want) : describe(want);
}

type WantedAttachment = Exclude<NonNullable<SandboxMessageMatch['attachments']>, Asymmetric>[number];

/** Whether an attachment's decoded bytes match `want`: the same bytes, or what a matcher says of them. */
function contentMatches(content: Buffer | null, want: string | Buffer | Asymmetric): boolean {
  if (isAsymmetric(want)) return want.asymmetricMatch(content);
  return content !== null && content.equals(typeof want === 'string' ? Buffer.from(want) : want);
}

function attachmentsMismatch(
  msg: SandboxSentMessage,
  wanted: NonNullable<SandboxMessageMatch['attachments']>,
): string | null {
  if (isAsymmetric(wanted))
    return wanted.asymmetricMatch(msg.attachments.map((a) => ({ ...a }))) ? null : 'attachments differ';
  const free = [...msg.attachments];
  for (const want of wanted as WantedAttachment[]) {
    const i = free.findIndex((a) =>
      isAsymmetric(want)
        ? want.asymmetricMatch({ ...a })
        : (want.filename === undefined || textMatches(a.filename, want.filename)) &&
          (want.contentType === undefined || textMatches(a.contentType, want.contentType)) &&
          (want.content === undefined || contentMatches(a.content, want.content)),
    );
    if (i < 0) return `no attachment like ${describeMatch(want)}`;
    free.splice(i, 1);
  }
  return null;
}

/** A short rendering of a wanted value: strings quoted, RegExps as written, matchers by their name. */
export function describe(want: unknown): string {
  if (typeof want === 'string') return JSON.stringify(want);
  if (want instanceof RegExp) return String(want);
  if (Buffer.isBuffer(want)) return `<${want.length} bytes>`;
  if (isAsymmetric(want)) {
    const asString = (want as { toString(): string }).toString();
    return asString === '[object Object]' ? 'a matcher' : asString;
  }
  return JSON.stringify(want) ?? String(want);
}

/** `{ to: "ada@example.org", subject: /hi/ }`. */
export function describeMatch(match: object): string {
  const parts = Object.entries(match)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => {
      if (Array.isArray(v))
        return `${k}: [${v.map((x) => (isPlain(x) ? describeMatch(x) : describe(x))).join(', ')}]`;
      return `${k}: ${isPlain(v) ? describeMatch(v) : describe(v)}`;
    });
  return parts.length ? `{ ${parts.join(', ')} }` : 'any message';
}

const isPlain = (v: unknown): v is object =>
  typeof v === 'object' && v !== null && !(v instanceof RegExp) && !Buffer.isBuffer(v) && !isAsymmetric(v);

/** One line per message: `#3 to ada@example.org "Welcome" (template 1)`, with why it failed when asked. */
export function listSent(messages: SandboxSentMessage[], match?: SandboxMessageMatch, max = 10): string {
  if (messages.length === 0) return '  (nothing was sent)';
  const shown = messages.slice(-max);
  const lines = shown.map((m) => {
    const why = match ? mismatch(m, match) : null;
    const template = m.templateId === null ? '' : ` (template ${m.templateId})`;
    const files = m.attachments.length ? ` [${m.attachments.map((a) => a.filename).join(', ')}]` : '';
    return `  #${m.id} to ${m.toAddresses.join(', ')}: ${JSON.stringify(m.subject)}${template}${files}${why ? `  <- ${why}` : ''}`;
  });
  const hidden = messages.length - shown.length;
  return (hidden > 0 ? [`  … ${hidden} older not shown`, ...lines] : lines).join('\n');
}
