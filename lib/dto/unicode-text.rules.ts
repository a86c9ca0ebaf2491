/**
 * How the client counts and which code points it refuses in the strings it sends. One rule for every
 * length of the contract ("1 to 255 characters", "minimum length 1"): **UTF-16 code units** (JavaScript's
 * `string.length`). It is the strictest of the usual counts (an emoji is 2 units, 1 code point, 1
 * grapheme), so a string that passes can never be refused by a server counting any of them.
 */

/** Length of `s` as the contract's limits are checked: UTF-16 code units. */
export function textLength(s: string): number {
  return s.length;
}

const HAS_WELL_FORMED = typeof (String.prototype as { isWellFormed?: unknown }).isWellFormed === 'function';

/**
 * True when `s` holds a lone surrogate (a high surrogate U+D800-U+DBFF not followed by a low one, or a
 * low surrogate U+DC00-U+DFFF not preceded by a high one): such a string has no UTF-8 form, so what the
 * server would store is not what was validated. One native scan where the runtime has `isWellFormed`.
 */
export function hasLoneSurrogate(s: string): boolean {
  if (HAS_WELL_FORMED) return !(s as unknown as { isWellFormed(): boolean }).isWellFormed();
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0xd800 || c > 0xdfff) continue;
    if (c >= 0xdc00) return true;
    const next = s.charCodeAt(i + 1);
    if (!(next >= 0xdc00 && next <= 0xdfff)) return true;
    i++;
  }
  return false;
}

/**
 * True when `s` holds an explicit bidirectional formatting character: the embeddings and overrides
 * U+202A-U+202E and the isolates U+2066-U+2069. With `marks`, the implicit marks U+200E, U+200F and
 * U+061C too. An override makes `invoice\u202Efdp.exe` read as `invoiceexe.pdf`.
 */
export function hasBidiControl(s: string, marks: boolean): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x61c) continue;
    if ((c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069)) return true;
    if (marks && (c === 0x200e || c === 0x200f || c === 0x61c)) return true;
  }
  return false;
}
