import type { StoredMessage } from './sandbox.store.js';

/** Most tags one message keeps. */
export const MAX_TAGS = 20;
/** Longest tag, in characters. */
export const MAX_TAG_LENGTH = 200;

/** Why `tag` cannot be a tag, or null. */
export function tagProblem(tag: unknown): string | null {
  if (typeof tag !== 'string' || tag.trim() === '') return 'a tag is a non-empty string';
  if (tag.length > MAX_TAG_LENGTH) return `a tag is at most ${MAX_TAG_LENGTH} characters`;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(tag)) return 'a tag has no control characters';
  return null;
}

/**
 * Labels on messages, the sandbox's own (never part of the service's records): what a test or the test kit
 * says about a message, such as `job:welcome-42` (the job that sent it) or `signup`. The outbox page shows
 * them and searches them (`tag:`, `job:`). Held by message, so a reset or a clear forgets them.
 */
export class SandboxTags {
  private readonly byMessage = new WeakMap<StoredMessage, string[]>();

  /** The tags of a message, in the order they were added. */
  of(msg: StoredMessage): readonly string[] {
    return this.byMessage.get(msg) ?? [];
  }

  /**
   * Adds tags (trimmed; one already there is not added twice); throws a `TypeError` naming a bad one, or
   * when the message would hold more than `MAX_TAGS`. Returns the message's tags.
   */
  add(msg: StoredMessage, tags: readonly unknown[]): string[] {
    for (const tag of tags) {
      const problem = tagProblem(tag);
      if (problem) throw new TypeError(`${problem} (got ${JSON.stringify(tag) ?? String(tag)})`);
    }
    const held = [...this.of(msg)];
    for (const tag of tags as string[]) if (!held.includes(tag.trim())) held.push(tag.trim());
    if (held.length > MAX_TAGS) throw new TypeError(`a message holds at most ${MAX_TAGS} tags`);
    this.byMessage.set(msg, held);
    return [...held];
  }
}
