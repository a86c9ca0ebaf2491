import { createHmac, randomBytes } from 'node:crypto';
import { domainToASCII } from 'node:url';

// How the suppression list compares addresses, and the 64-bit fingerprints its local copy holds.
//
// Two recipients are the same address when their addr-specs (the display name dropped) are equal without
// regard to case: in the domain, as DNS says (and an internationalized domain in its ASCII form, so
// `bücher.example` is `xn--bcher-kva.example`); in the local part too, although SMTP lets a server treat
// it as case-sensitive, because every large mailbox provider does not and a list that mails `Ada@` after
// `ada@` bounced is the harm it exists to prevent (a false refusal of a mailbox that really differs only
// by case is the rarer and cheaper mistake). A non-ASCII local part is compared in Unicode NFC. Nothing
// else is folded: `+tags` and dots are the provider's business, and two such addresses may be two people.

/** The addr-spec of a recipient as the list keeps it: lower case, no display name (see above). */
export function normalizeAddress(recipient: string): string {
  const end = recipient.length;
  const open = recipient.charCodeAt(end - 1) === 62 ? recipient.lastIndexOf('<') : -1;
  const spec = (open >= 0 ? recipient.slice(open + 1, end - 1) : recipient).trim();
  const at = spec.lastIndexOf('@');
  const local = spec.slice(0, Math.max(at, 0));
  const domain = at < 0 ? spec : spec.slice(at + 1);
  // eslint-disable-next-line no-control-regex
  if (!/[^\x00-\x7f]/.test(spec))
    return at < 0 ? spec.toLowerCase() : `${local.toLowerCase()}@${domain.toLowerCase()}`;
  // eslint-disable-next-line no-control-regex
  const ascii = /[^\x00-\x7f]/.test(domain)
    ? domainToASCII(domain) || domain.toLowerCase()
    : domain.toLowerCase();
  const wide = local.normalize('NFC').toLowerCase().normalize('NFC');
  return at < 0 ? ascii : `${wide}@${ascii}`;
}

// The fingerprint: two 32-bit halves, read from `FP_HI` and `FP_LO` after a call (no allocation per send).
// By default a seeded 64-bit hash of the normalized address (the seed is random per process: the local
// copy is built from the store's addresses, so no one can aim a collision at it); with `hashAddresses`,
// the first 8 bytes of the entry's HMAC, which every process computes alike.

/** The last fingerprint computed. */
export let FP_HI = 0;
export let FP_LO = 0;

const SEED = randomBytes(8);
const SEED_HI = SEED.readUInt32LE(0);
const SEED_LO = SEED.readUInt32LE(4);

/** A 32-bit seed for a list (its scope), mixed with this process's random seed. */
export function scopeSeed(scope: string): number {
  let h = SEED_HI ^ 0x9e3779b9;
  for (let i = 0; i < scope.length; i++) h = Math.imul(h ^ scope.charCodeAt(i), 0x01000193);
  return (h ^ (h >>> 15)) >>> 0;
}

/** Mixes the two lanes of `hashRange` into the final fingerprint. */
function finish(h1: number, h2: number): void {
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507);
  h1 ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507);
  h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  FP_HI = h1 >>> 0;
  FP_LO = h2 >>> 0 || 1; // (0, 0) marks an empty slot
}

/** Hashes an already normalized address under `seed` into `FP_HI`/`FP_LO`. */
export function fingerprintNormalized(normalized: string, seed: number): void {
  let h1 = 0xdeadbeef ^ seed ^ SEED_LO;
  let h2 = 0x41c6ce57 ^ seed;
  for (let i = 0; i < normalized.length; i++) {
    const c = normalized.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  finish(h1, h2);
}

/**
 * The fingerprint of a recipient as given (`Ada <Ada@Example.com>`) under `seed`, equal to that of its
 * normalized address: an ASCII addr-spec is folded to lower case as it is hashed, with no string made;
 * anything else goes through `normalizeAddress`.
 */
export function fingerprintRecipient(recipient: string, seed: number): void {
  let end = recipient.length;
  let start = 0;
  if (recipient.charCodeAt(end - 1) === 62) {
    start = recipient.lastIndexOf('<') + 1;
    end--;
  }
  let h1 = 0xdeadbeef ^ seed ^ SEED_LO;
  let h2 = 0x41c6ce57 ^ seed;
  for (let i = start; i < end; i++) {
    let c = recipient.charCodeAt(i);
    if (c >= 0x80 || c === 0x20) return fingerprintNormalized(normalizeAddress(recipient), seed);
    if (c >= 65 && c <= 90) c |= 0x20;
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  finish(h1, h2);
}

/** Prefix of a keyed hash where an address would stand (`list` with `hashAddresses`, and `remove`). */
export const HASHED_PREFIX = 'hmac:';

/**
 * The key of an address in the shared store with `hashAddresses`: `hmac:` and 22 characters (the first 16
 * bytes of HMAC-SHA-256 under the secret, of the list and the normalized address), into `FP_HI`/`FP_LO` too.
 */
export function hashedKey(secret: string, scope: string, normalized: string): string {
  const digest = createHmac('sha256', secret).update(`${scope}\n${normalized}`).digest();
  FP_HI = digest.readUInt32LE(0);
  FP_LO = digest.readUInt32LE(4) || 1;
  return HASHED_PREFIX + digest.subarray(0, 16).toString('base64url');
}

/** The fingerprint of a stored keyed hash (`hmac:…`) into `FP_HI`/`FP_LO`; false when it is not one. */
export function fingerprintHashed(key: string): boolean {
  if (!key.startsWith(HASHED_PREFIX) || key.length !== HASHED_PREFIX.length + 22) return false;
  const bytes = Buffer.from(key.slice(HASHED_PREFIX.length), 'base64url');
  if (bytes.length !== 16) return false;
  FP_HI = bytes.readUInt32LE(0);
  FP_LO = bytes.readUInt32LE(4) || 1;
  return true;
}
