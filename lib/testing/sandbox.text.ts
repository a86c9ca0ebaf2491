// The sandbox's own rules for the characters of a string it receives, written from the contract and
// the security notes, not imported from the client's checks (an emulator must not reuse what it checks).
// Lengths are UTF-16 code units (`string.length`), as everywhere in the sandbox.

/** Index of the first unpaired surrogate code unit of `s`, or -1 when every surrogate is paired. */
export function loneSurrogateAt(s: string): number {
  for (let i = 0; i < s.length; i++) {
    const unit = s.charCodeAt(i);
    if (unit < 0xd800 || unit > 0xdfff) continue;
    const isHigh = unit <= 0xdbff;
    const low = i + 1 < s.length ? s.charCodeAt(i + 1) : 0;
    if (!isHigh || low < 0xdc00 || low > 0xdfff) return i;
    i += 1; // the pair's low half
  }
  return -1;
}

const EMBEDDINGS_AND_ISOLATES = /[\u202a-\u202e\u2066-\u2069]/;
const ANY_BIDI_CONTROL = /[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/;

/**
 * Why `value` (a string field at `path`) is refused, or null. `bidi`: 'none' allows every direction
 * character, 'explicit' refuses embeddings, overrides and isolates, 'all' refuses the marks too.
 */
export function textProblem(value: string, path: string, bidi: 'none' | 'explicit' | 'all'): string | null {
  if (loneSurrogateAt(value) !== -1) return `${path} holds a lone surrogate and has no UTF-8 form`;
  if (bidi === 'explicit' && EMBEDDINGS_AND_ISOLATES.test(value))
    return `${path} must not hold bidirectional embeddings, overrides or isolates`;
  if (bidi === 'all' && ANY_BIDI_CONTROL.test(value))
    return `${path} must not hold bidirectional control characters`;
  return null;
}
