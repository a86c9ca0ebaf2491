// Links and codes out of a message, as a test reads them: the links of its html (with their anchor text)
// and of its text body, and the one-time codes of a login or sign-up mail. Pure text work: no request.

/**
 * A link of a message.
 * @publicApi
 */
export interface SandboxLink {
  /**
   * The destination as the app wrote it, entities decoded. For a message whose links the sandbox's click
   * tracking rewrote, the link before tracking (`clickLink` goes through the tracked one).
   */
  url: string;
  /**
   * The anchor's text as a reader sees it (tags removed, entities decoded, spaces collapsed; an image's
   * `alt` when the anchor holds only images), or null for a link of the text body.
   */
  text: string | null;
  /** Where it was found: an `<a href>` of the html, or a URL written out in the text body. */
  source: 'html' | 'text';
}

/**
 * What the link and code helpers read: a message's bodies. Any message of the sandbox (`sent()`,
 * `messages()`, a `RemoteSandboxMailbox`'s) is one, and so is a record with bodies (`EmailDetail`).
 * @publicApi
 */
export interface SandboxBodies {
  subject?: string | null;
  bodyText?: string | null;
  /** The html as delivered (with tracking, when it applies). */
  html?: string | null;
  /** The html as the app sent it, before tracking; read in place of `html` when present. */
  sentHtml?: string | null;
}

const ANCHOR = /<a\b([^>]*)>([\s\S]*?)<\/a\s*>/gi;
const HREF = /\bhref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))/i;
const ALT = /<img\b[^>]*?\balt\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))/gi;
const TEXT_URL = /\bhttps?:\/\/[^\s<>"'`]+/gi;
const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/** Decodes the entities a link or a text of html carries: the five of XML, `&nbsp;` and numeric ones. */
export function decodeEntities(text: string): string {
  return text.replace(/&(?:#(\d{1,7})|#x([0-9a-f]{1,6})|([a-z]+));/gi, (whole, dec, hex, name) => {
    if (name !== undefined) return NAMED[(name as string).toLowerCase()] ?? whole;
    const code = dec !== undefined ? Number(dec) : parseInt(hex as string, 16);
    return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
  });
}

/** The text a reader sees in html: without head, style, script and comments; tags as spaces; collapsed. */
export function visibleText(html: string): string {
  const body = html
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/<(head|style|script|title)\b[\s\S]*?<\/\1\s*>/gi, ' ')
    .replace(/<br\s*\/?>|<\/(p|div|tr|li|h[1-6])\s*>/gi, '\n')
    .replace(/<[^>]*>/g, ' ');
  return decodeEntities(body)
    .replace(/[ \t\f\v\u00a0]+/g, ' ')
    .replace(/ *\n[\s]*/g, '\n')
    .trim();
}

const attr = (m: RegExpExecArray | null) => (m ? decodeEntities(m[1] ?? m[2] ?? m[3] ?? '').trim() : null);

function htmlLinks(html: string): SandboxLink[] {
  const out: SandboxLink[] = [];
  for (const m of html.matchAll(ANCHOR)) {
    const url = attr(HREF.exec(m[1]));
    if (url === null) continue;
    let text = visibleText(m[2]).replace(/\s+/g, ' ');
    if (text === '')
      text = [...m[2].matchAll(ALT)]
        .map((a) => attr(a))
        .join(' ')
        .trim();
    out.push({ url, text, source: 'html' });
  }
  return out;
}

/** A URL written out in text ends before the punctuation that closes its sentence. */
function trimUrl(url: string): string {
  let out = url.replace(/[.,;:!?]+$/, '');
  for (const [open, close] of [
    ['(', ')'],
    ['[', ']'],
  ]) {
    while (out.endsWith(close) && out.split(close).length > out.split(open).length)
      out = out.slice(0, -1).replace(/[.,;:!?]+$/, '');
  }
  return out;
}

function textLinks(text: string): SandboxLink[] {
  return [...text.matchAll(TEXT_URL)].map((m) => ({
    url: trimUrl(m[0]),
    text: null,
    source: 'text' as const,
  }));
}

/**
 * Every link of a message, in order: the `<a href>`s of its html (the html as the app sent it, so links
 * rewritten for click tracking come back as their destinations) with their anchor text, then the URLs of
 * its text body that the html did not already give. Given a string: its anchors when it holds an `<a>`
 * tag, else the URLs written out in it.
 *
 * @example
 * const [reset] = linksOf(mail).filter((l) => l.text === 'Reset your password');
 * @publicApi
 */
export function linksOf(message: SandboxBodies | string | null | undefined): SandboxLink[] {
  if (typeof message === 'string') return /<a\b/i.test(message) ? htmlLinks(message) : textLinks(message);
  if (!message) return [];
  const html = message.sentHtml ?? message.html ?? null;
  const links = html === null ? [] : htmlLinks(html);
  const seen = new Set(links.map((l) => l.url));
  for (const link of message.bodyText ? textLinks(message.bodyText) : []) {
    if (seen.has(link.url)) continue;
    seen.add(link.url);
    links.push(link);
  }
  return links;
}

/** Words that name a one-time code; a number just after one is the code the default looks for first. */
const CODE_WORDS =
  /\b(?:code|pin|otp|passcode|password|verification|verify|one[- ]time|token|confirm(?:ation)?)\b[^\n\d]{0,40}/gi;
/** 4 to 8 digits standing alone: not part of a word, a date, a time, a price, an order number or an address. */
const LONE_DIGITS = /(?<![\p{L}\p{N}_\-./:#@$€£+])\d{4,8}(?![\p{L}\p{N}_\-/:@%]|[.,]\d)/gu;

/**
 * Options of `codesIn`, `codeIn` and the code matchers.
 * @publicApi
 */
export interface SandboxCodeOptions {
  /**
   * The app's own pattern of a code (its first capture group, when it has one, is the code), e.g.
   * `/\b[A-Z]{3}-\d{3}\b/` or `/code: (\w{6})/`. @default 4 to 8 digits standing alone, those after a word
   * such as "code", "PIN" or "verification" first
   */
  pattern?: RegExp;
}

/** The texts a code is looked for in, in order: the subject, the text body, the html's visible text. */
function codeTexts(message: SandboxBodies | string): string[] {
  const texts =
    typeof message === 'string'
      ? [/<[a-z!/]/i.test(message) ? visibleText(message) : message]
      : [message.subject ?? '', message.bodyText ?? '', visibleText(message.sentHtml ?? message.html ?? '')];
  // A code is never part of a link: tokens and ids in URLs are left out.
  return texts.map((t) => t.replace(TEXT_URL, ' '));
}

function ownPattern(pattern: RegExp): RegExp {
  const flags = pattern.flags.includes('g') ? pattern.flags : `${pattern.flags}g`;
  return new RegExp(pattern.source, flags);
}

/**
 * The codes of a message (its subject, text body and html's visible text; never inside a link), each once,
 * in the order found. With the default pattern, numbers that follow a word such as "code" come first.
 *
 * @example
 * codesIn(mail) // ['482913']
 * codesIn(mail, { pattern: /\b[A-Z]{3}-\d{3}\b/ }) // ['KQX-204']
 * @publicApi
 */
export function codesIn(
  message: SandboxBodies | string | null | undefined,
  options: SandboxCodeOptions = {},
): string[] {
  if (options.pattern !== undefined && !(options.pattern instanceof RegExp)) {
    throw new TypeError('codesIn: pattern must be a RegExp, e.g. /\\b[A-Z]{3}-\\d{3}\\b/');
  }
  if (message === null || message === undefined) return [];
  const found: string[] = [];
  const add = (code: string | undefined) => {
    if (code && !found.includes(code)) found.push(code);
  };
  const texts = codeTexts(message);
  if (options.pattern) {
    const pattern = ownPattern(options.pattern);
    for (const text of texts) for (const m of text.matchAll(pattern)) add(m[1] ?? m[0]);
    return found;
  }
  for (const text of texts)
    for (const near of text.matchAll(CODE_WORDS)) {
      const after = text.slice((near.index ?? 0) + near[0].length);
      const m = /^\d{4,8}(?![\p{L}\p{N}_\-/:@%]|[.,]\d)/u.exec(after);
      if (m) add(m[0]);
    }
  for (const text of texts) for (const m of text.matchAll(LONE_DIGITS)) add(m[0]);
  return found;
}
