import { createHash } from 'node:crypto';
import { SandboxHttpError } from './sandbox.http.js';

/** Pattern an Idempotency-Key must match. */
export const IDEMPOTENCY_KEY = /^[-A-Za-z0-9_:]{16,128}$/;

interface Entry {
  hash: string;
  id: number;
  state: 'in-flight' | 'done';
  expiresAt: number;
}

/** Fingerprint of a request: method, path and the exact body bytes. */
export function requestHash(method: string, path: string, body: Buffer): string {
  return createHash('sha256').update(`${method} ${path}\n`).update(body).digest('hex');
}

/**
 * Idempotency keys of single sends, per owner (the key's account, or the API key itself with
 * `idempotencyScope: 'key'`). A key is bound to the fingerprint of the first
 * request that created a message with it; while that request is still being answered it is
 * `in-flight`, afterwards `done`.
 */
export class SandboxIdempotency {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly ttlMs: number,
    /** Keys remembered at most; the oldest are forgotten first. */
    private readonly maxEntries = 200_000,
  ) {}

  /**
   * The id of the message an earlier identical request created, or undefined when the key is new.
   * Throws 409 when the key belongs to a different request or the first one is still in flight.
   */
  lookup(owner: string, key: string, hash: string, now: number): number | undefined {
    const entry = this.entries.get(`${owner}\0${key}`);
    if (!entry) return undefined;
    if (entry.expiresAt <= now) {
      this.entries.delete(`${owner}\0${key}`);
      return undefined;
    }
    if (entry.hash !== hash) {
      throw new SandboxHttpError(409, 'Idempotency-Key was already used with a different request');
    }
    if (entry.state === 'in-flight') {
      throw new SandboxHttpError(409, 'a request with this Idempotency-Key is still being processed');
    }
    return entry.id;
  }

  /** Binds a key to the message just created; returns the function that marks it done. */
  reserve(owner: string, key: string, hash: string, id: number, now: number): () => void {
    const entry: Entry = { hash, id, state: 'in-flight', expiresAt: now + this.ttlMs };
    this.entries.set(`${owner}\0${key}`, entry);
    if (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    return () => {
      entry.state = 'done';
    };
  }

  /** Forgets every key. */
  clear(): void {
    this.entries.clear();
  }
}
