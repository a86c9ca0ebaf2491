/** Removes a secret from a text, then cuts the text to `max` characters (adding `…` when cut). */
export type Redactor = (text: string, max?: number) => string;

const MARK = '[redacted]';

/** Shortest run of a key's characters (after decoding) that is taken for a piece of it. */
const MIN_FRAGMENT = 8;
/** Shortest run of an encoded form (base64, hex) that is taken for a piece of it. */
const MIN_ENCODED_FRAGMENT = 12;
/** Shortest prefix of the key left at the very end of a text that is taken for a cut-off key. */
const MIN_TAIL = 4;
/** How many times a text is decoded (a key JSON-escaped twice, or `%25XX`, is still found). */
const DECODE_ROUNDS = 3;
/** Separators a hostile server may put between the key's characters, when the key does not use them. */
const SEPARATORS = '-_.:,;|/\\+*~^`\'"()[]{}<>';

/** Named HTML entities of the visible ASCII characters that have one (lower-cased: matched after folding). */
const NAMED: Record<string, string> = {
  quot: '"', amp: '&', lt: '<', gt: '>', apos: "'", excl: '!', num: '#', dollar: '$', percnt: '%',
  lpar: '(', rpar: ')', ast: '*', midast: '*', plus: '+', comma: ',', period: '.', sol: '/', colon: ':',
  semi: ';', equals: '=', quest: '?', commat: '@', lsqb: '[', lbrack: '[', bsol: '\\', rsqb: ']',
  rbrack: ']', hat: '^', lowbar: '_', underbar: '_', grave: '`', lcub: '{', lbrace: '{', verbar: '|',
  vert: '|', rcub: '}', rbrace: '}', tilde: '~', hyphen: '-', dash: '-', nbsp: ' ', tab: '\t', newline: '\n',
}; // prettier-ignore

/** Invisible or blank code units a server may wrap or space the key with (the key has none of them). */
function isBlank(c: number): boolean {
  return (
    c <= 0x20 ||
    c === 0x7f ||
    c === 0x85 ||
    c === 0xa0 ||
    c === 0xad ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200f) ||
    (c >= 0x2028 && c <= 0x202f) ||
    (c >= 0x205f && c <= 0x2064) ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

/** A text seen another way, with where each of its characters came from in the original text. */
interface View {
  text: string;
  /** `from[i]`..`to[i]` (exclusive): the original characters that became character `i`. */
  from: number[];
  to: number[];
}

const HEX = /^[0-9a-f]+$/;
const keep = (): boolean => false;

/**
 * One decoding step at `i` of `s` (already folded to lower case): an HTML entity, `%XX`, `\uXXXX`,
 * `\xXX` or a backslash escape. Returns [character, length of the escape], or undefined.
 */
function decodeAt(s: string, i: number): [string, number] | undefined {
  const c = s[i];
  if (c === '%' && i + 3 <= s.length && HEX.test(s.slice(i + 1, i + 3))) {
    return [String.fromCharCode(parseInt(s.slice(i + 1, i + 3), 16)), 3];
  }
  if (c === '\\') {
    const n = s[i + 1];
    if (n === 'u' && i + 6 <= s.length && HEX.test(s.slice(i + 2, i + 6)))
      return [String.fromCharCode(parseInt(s.slice(i + 2, i + 6), 16)), 6];
    if (n === 'x' && i + 4 <= s.length && HEX.test(s.slice(i + 2, i + 4)))
      return [String.fromCharCode(parseInt(s.slice(i + 2, i + 4), 16)), 4];
    if (n === 'n' || n === 'r' || n === 't') return [' ', 2];
    if (n !== undefined && n.charCodeAt(0) > 0x20 && n.charCodeAt(0) < 0x7f && !/[0-9a-z]/.test(n))
      return [n, 2];
    return undefined;
  }
  if (c === '&') {
    const semi = s.slice(i + 2, i + 14).indexOf(';'); // entities are short: never a scan to the end
    if (semi === -1) return undefined;
    const end = i + 2 + semi;
    const body = s.slice(i + 1, end);
    if (body[0] === '#') {
      const hex = body[1] === 'x';
      const digits = body.slice(hex ? 2 : 1);
      if (digits === '' || !(hex ? HEX : /^[0-9]+$/).test(digits)) return undefined;
      const code = parseInt(digits, hex ? 16 : 10);
      return code < 0x110000 ? [String.fromCodePoint(code), end - i + 1] : undefined;
    }
    return Object.hasOwn(NAMED, body) ? [NAMED[body], end - i + 1] : undefined;
  }
  return undefined;
}

/** ASCII letters to lower case, one code unit for one (so positions do not move). */
function fold(s: string): string {
  let out = '';
  let last = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 65 && c <= 90) {
      out += s.slice(last, i) + String.fromCharCode(c + 32);
      last = i + 1;
    }
  }
  return last === 0 ? s : out + s.slice(last);
}

/**
 * Decodes `view` once (entities, %XX, backslash escapes; not when `decode` is false), folds it to lower
 * case and drops the characters `drop` says are padding, keeping track of where every character came from.
 */
function decodeView(view: View, drop: (c: number) => boolean, decode: boolean): View {
  const s = view.text;
  let text = '';
  const from: number[] = [];
  const to: number[] = [];
  for (let i = 0; i < s.length;) {
    const d = decode ? decodeAt(s, i) : undefined;
    const ch = d === undefined ? s[i] : fold(d[0]);
    const len = d === undefined ? 1 : d[1];
    if (!drop(ch.charCodeAt(0))) {
      text += ch;
      from.push(view.from[i]);
      to.push(view.to[i + len - 1]);
    }
    i += len;
  }
  return { text, from, to };
}

/** Base64 (or base64url) of `key` when it starts at each of the 3 byte alignments of a longer text. */
function base64Forms(key: Buffer, url: boolean): string[] {
  const forms: string[] = [];
  for (let a = 0; a < 3; a++) {
    const encoded = Buffer.concat([Buffer.alloc(a), key]).toString(url ? 'base64url' : 'base64');
    // only the characters whose 6 bits all come from the key
    const first = Math.ceil((8 * a) / 6);
    const last = Math.floor((8 * (a + key.length)) / 6);
    forms.push(encoded.slice(first, last));
  }
  return forms;
}

/** A search of one kind of form in views of the text, each found span redacted. */
interface Search {
  drop: (c: number) => boolean;
  /** Whole forms (folded) to find. */
  forms: string[];
  /** Every run of `fragment` characters of a form: a piece of the key. */
  pieces: Set<string>;
  fragment: number;
  /** Prefixes of the key at the very end of the text count too. */
  tail: boolean;
}

function piecesOf(forms: string[], n: number): Set<string> {
  const set = new Set<string>();
  for (const f of forms) for (let i = 0; i + n <= f.length; i++) set.add(f.slice(i, i + n));
  return set;
}

function cut(text: string, max: number): string {
  return text.length > max ? text.slice(0, max) + '…' : text;
}

/** Redacts `spans` (original positions, any order, may overlap) from `text`. */
function redactSpans(text: string, spans: [number, number][]): string {
  if (spans.length === 0) return text;
  spans.sort((a, b) => a[0] - b[0]);
  let out = '';
  let at = 0;
  for (const [start, end] of spans) {
    if (end <= at) continue;
    if (start >= at) out += text.slice(at, start) + MARK;
    at = end;
  }
  return out + text.slice(at);
}

/** Finds the forms and pieces of `search` in `view` and adds their original spans to `spans`. */
function find(view: View, search: Search, spans: [number, number][]): void {
  const t = view.text;
  const span = (i: number, n: number) => spans.push([view.from[i], view.to[i + n - 1]]);
  for (const f of search.forms) {
    for (let i = t.indexOf(f); i !== -1; i = t.indexOf(f, i + 1)) span(i, f.length);
  }
  const n = search.fragment;
  const isPiece = (s: string) => search.forms.some((f) => f.includes(s));
  for (let i = 0; i + n <= t.length; i++) {
    if (!search.pieces.has(t.slice(i, i + n))) continue;
    let end = i + n;
    while (end < t.length && isPiece(t.slice(i, end + 1))) end++;
    span(i, end - i);
    i = end - 1;
  }
  if (search.tail) {
    const f = search.forms[0];
    for (let k = Math.min(f.length - 1, n - 1, t.length); k >= MIN_TAIL; k--) {
      if (t.endsWith(f.slice(0, k))) return void span(t.length - k, k);
    }
  }
}

/**
 * A redactor for `secret`, with everything it looks for worked out once (here, not per call): it is
 * called only on the error path, so a successful send pays nothing. The text is searched whole, before
 * it is cut, in two views:
 * - decoded (HTML entities, `%XX`, `\uXXXX`, `\xXX`, backslash escapes; up to 3 rounds, so a key escaped
 *   twice is found), ASCII case folded, with blanks and the separators the key does not use left out:
 *   the key as is, upper- or lower-cased, JSON-escaped, URL-encoded, as entities, wrapped or spaced out,
 *   and any run of 8 or more of its characters, or a prefix of 4 or more at the very end of the text;
 * - case folded with blanks left out: the key in hex, in base64 and base64url at each of the 3 byte
 *   alignments it can have inside a longer base64 text, and any run of 12 of those characters.
 * Every span found is replaced by `[redacted]`; then the text is cut to `max`.
 */
export function secretRedactor(secret: string): Redactor {
  if (secret.length === 0) return (text, max = Infinity) => cut(text, max);
  const key = fold(secret);
  const used = new Set(key);
  const separators = new Set([...SEPARATORS].filter((ch) => !used.has(ch)).map((ch) => ch.charCodeAt(0)));
  const dropSeparators = (c: number) => isBlank(c) || separators.has(c);
  const bytes = Buffer.from(secret);
  const encoded = [
    ...new Set([bytes.toString('hex'), ...base64Forms(bytes, false), ...base64Forms(bytes, true)].map(fold)),
  ].filter((f) => f.length >= MIN_ENCODED_FRAGMENT || f.length === bytes.toString('hex').length);
  const plain: Search = {
    drop: dropSeparators,
    forms: [key],
    pieces: piecesOf([key], Math.min(MIN_FRAGMENT, key.length)),
    fragment: Math.min(MIN_FRAGMENT, key.length),
    tail: true,
  };
  const fragment = Math.min(MIN_ENCODED_FRAGMENT, ...encoded.map((f) => f.length));
  const coded: Search = {
    drop: isBlank,
    forms: encoded,
    pieces: piecesOf(encoded, fragment),
    fragment,
    tail: false,
  };
  // a key spread out by separators or escapes takes more room than its plain form: search that much more
  const margin = 1024 + 16 * Math.max(key.length, ...encoded.map((f) => f.length));
  return (whole, max = Infinity) => {
    const text = whole.length > max + margin ? whole.slice(0, max + margin) : whole;
    const spans: [number, number][] = [];
    let view: View = { text: fold(text), from: [], to: [] };
    for (let i = 0; i < text.length; i++) {
      view.from.push(i);
      view.to.push(i + 1);
    }
    for (let round = 0; ; round++) {
      // searched with the padding left out; decoded again (padding kept: `;` may end an entity)
      for (const search of [plain, coded]) find(decodeView(view, search.drop, false), search, spans);
      if (round === DECODE_ROUNDS) break;
      const next = decodeView(view, keep, true);
      if (next.text === view.text) break;
      view = next;
    }
    return cut(redactSpans(text, spans), max);
  };
}
