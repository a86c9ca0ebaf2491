/** Removes a secret from a text, then cuts the text to `max` characters (adding `…` when cut). */
export type Redactor = (text: string, max?: number) => string;

const MARK = '[redacted]';

/** Shortest run of a key's characters that is taken for a piece of it. */
const MIN_FRAGMENT = 8;

/** Every form the key can take in a text a server sends back: as is, JSON-escaped (once, twice), URL-encoded. */
function formsOf(secret: string): string[] {
  const json = JSON.stringify(secret).slice(1, -1);
  const forms = [secret, json, JSON.stringify(json).slice(1, -1), encodeURIComponent(secret)];
  return [...new Set(forms)].sort((a, b) => b.length - a.length);
}

function cut(text: string, max: number): string {
  return text.length > max ? text.slice(0, max) + '…' : text;
}

/**
 * A redactor for `secret`. It works on a window a little longer than `max`, so that a key straddling
 * the cut is seen whole: every form of the key is replaced first, then any remaining piece of it
 * (a run of at least 8 of its characters, or a shorter prefix of it left at the very end of the
 * text) is replaced too, and only then is the text cut.
 */
export function secretRedactor(secret: string): Redactor {
  if (secret.length === 0) return (text, max = Infinity) => cut(text, max);
  const forms = formsOf(secret);
  const longest = forms[0].length;
  const window = Math.min(MIN_FRAGMENT, secret.length);
  const isPiece = (s: string): boolean => forms.some((f) => f.includes(s));
  return (text, max = Infinity) => {
    let t = Number.isFinite(max) && text.length > max + longest ? text.slice(0, max + longest) : text;
    for (const f of forms) if (t.includes(f)) t = t.split(f).join(MARK);
    t = scrubPieces(t, window, isPiece);
    t = scrubTail(t, forms);
    const out = cut(t, max);
    return out === t ? out : scrubTail(out.slice(0, -1), forms) + '…';
  };
}

/** Replaces every run of at least `window` characters that is a piece of the key. */
function scrubPieces(text: string, window: number, isPiece: (s: string) => boolean): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    if (i + window <= text.length && isPiece(text.slice(i, i + window))) {
      let end = i + window;
      while (end < text.length && isPiece(text.slice(i, end + 1))) end++;
      out += MARK;
      i = end;
    } else {
      out += text[i];
      i++;
    }
  }
  return out;
}

/** Replaces a prefix of the key (4 characters or more) left at the very end of a text. */
function scrubTail(text: string, forms: string[]): string {
  for (const f of forms) {
    for (let n = Math.min(f.length - 1, text.length); n >= 4; n--) {
      if (text.endsWith(f.slice(0, n))) return text.slice(0, -n) + MARK;
    }
  }
  return text;
}
