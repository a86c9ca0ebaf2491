const ALPHABET = new Uint8Array(128);
for (const ch of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/') {
  ALPHABET[ch.charCodeAt(0)] = 1;
}

/**
 * Size in bytes of what a standard base64 string decodes to, or `-1` when it is not base64.
 * Accepted: the standard alphabet (`A-Z a-z 0-9 + /`), a length that is a multiple of 4, and at most two `=`
 * of padding at the very end. Refused: the empty string, whitespace and line breaks, the URL-safe alphabet,
 * missing padding. One scan over a lookup table; the size comes from the length and the padding.
 *
 * @example
 * base64DecodedLength('aGk=') // 2
 * base64DecodedLength('aGk')  // -1
 */
export function base64DecodedLength(s: string): number {
  const len = s.length;
  if (len === 0 || (len & 3) !== 0) return -1;
  let pad = 0;
  if (s.charCodeAt(len - 1) === 61) pad = s.charCodeAt(len - 2) === 61 ? 2 : 1;
  const end = len - pad;
  for (let i = 0; i < end; i++) {
    const c = s.charCodeAt(i);
    if (c >= 128 || ALPHABET[c] === 0) return -1;
  }
  return (len >>> 2) * 3 - pad;
}
