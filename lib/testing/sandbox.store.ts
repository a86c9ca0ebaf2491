import type { SandboxEmailDetail, SandboxEmailEvent } from './sandbox.records.js';

/** A message as the sandbox keeps it: the wire record plus what tracking and scoping need. */
export interface StoredMessage {
  readonly detail: SandboxEmailDetail;
  readonly account: string;
  /** Events, oldest first (served newest first). */
  readonly events: SandboxEmailEvent[];
  /** Epoch ms at which a scheduled message becomes sent; null otherwise. */
  dueAt: number | null;
  /** Whether opens / clicks can be recorded (flag on and an html body present). */
  readonly opensApply: boolean;
  readonly clicksApply: boolean;
  /** Secret part of the tracking URLs; null when nothing is tracked. */
  token: string | null;
  /** Original destinations of the rewritten links, by index. */
  links: string[];
  /** Bytes of body text it keeps (`SandboxStore.weigh`), counted against the store's `maxKeptBytes`. */
  weight?: number;
}

/** Bytes of body text all messages of a mailbox keep, by default; past it the oldest messages go. */
export const KEPT_BODY_BYTES = 256 * 1024 * 1024;

/** UTF-8 bytes of a kept text (null: none). */
export const keptBytes = (text: string | null): number =>
  text === null ? 0 : Buffer.byteLength(text, 'utf8');

/** Fields of a new message the caller decides. */
export type NewMessage = Omit<
  SandboxEmailDetail,
  'id' | 'providerEmailId' | 'status' | 'errorMessage' | 'openedAt' | 'clickedAt' | 'openCount' | 'clickCount'
> & { account: string; dueAt: number | null; opensApply: boolean; clicksApply: boolean };

const iso = (ms: number): string => new Date(ms).toISOString();

/**
 * In-memory message log: integer ids from 1, newest-first listing per account, lazy promotion of
 * scheduled messages to `sent`, bounded size (oldest forgotten first).
 */
export class SandboxStore {
  private readonly byId = new Map<number, StoredMessage>();
  private order: StoredMessage[] = [];
  private scheduled: StoredMessage[] = [];
  private nextDue = Infinity;
  private nextId = 1;
  private nextEventId = 1;
  private changes = 0;
  /** Told of each scheduled message as it becomes sent (the mailbox's bounces then apply). */
  onSent?: (msg: StoredMessage, at: number) => void;

  /** Bytes of body text the messages kept hold (each counted once `weigh` saw it). */
  private bytes = 0;

  constructor(
    private readonly maxMessages: number,
    private readonly maxKeptBytes = KEPT_BODY_BYTES,
  ) {}

  /**
   * Counts what a new message keeps (its record's html and text, and `extra`: the html as sent when
   * tracking rewrote it), and drops the oldest messages while the mailbox keeps more than `maxKeptBytes`
   * (never the message just weighed). A load test of large emails holds a bounded amount of memory.
   */
  weigh(msg: StoredMessage, extra = 0): void {
    const weight = keptBytes(msg.detail.html) + keptBytes(msg.detail.bodyText) + extra;
    msg.weight = weight;
    this.bytes += weight;
    let drop = 0;
    let freed = 0;
    while (this.bytes - freed > this.maxKeptBytes && drop < this.order.length) {
      const oldest = this.order[drop]!;
      if (oldest === msg) break;
      freed += oldest.weight ?? 0;
      drop++;
    }
    this.dropOldest(drop);
  }

  /** Creates a message, `scheduled` when `dueAt` is set, `sent` otherwise. */
  create(input: NewMessage): StoredMessage {
    const id = this.nextId++;
    const sent = input.dueAt === null;
    const detail: SandboxEmailDetail = {
      id,
      providerEmailId: sent ? `sandbox-${id}` : null,
      fromAddress: input.fromAddress,
      toAddresses: input.toAddresses,
      subject: input.subject,
      status: sent ? 'sent' : 'scheduled',
      errorMessage: null,
      scheduledAt: input.scheduledAt,
      trackOpens: input.trackOpens,
      trackClicks: input.trackClicks,
      openedAt: null,
      clickedAt: null,
      openCount: 0,
      clickCount: 0,
      createdAt: input.createdAt,
      updatedAt: input.updatedAt,
      html: input.html,
      bodyText: input.bodyText,
    };
    const { account, dueAt, opensApply, clicksApply } = input;
    const stored: StoredMessage = {
      detail,
      account,
      events: [],
      dueAt,
      opensApply,
      clicksApply,
      token: null,
      links: [],
    };
    this.byId.set(id, stored);
    this.order.push(stored);
    if (dueAt !== null) {
      this.scheduled.push(stored);
      if (dueAt < this.nextDue) this.nextDue = dueAt;
    }
    if (this.byId.size > this.maxMessages) this.evictOldest();
    this.changes++;
    return stored;
  }

  /** Puts back a message saved earlier (`--data`), with its id; later ids and event ids follow on. */
  restore(saved: StoredMessage): StoredMessage {
    const stored: StoredMessage = { ...saved, detail: { ...saved.detail }, events: [...saved.events] };
    this.byId.set(stored.detail.id, stored);
    this.order.push(stored);
    this.nextId = Math.max(this.nextId, stored.detail.id + 1);
    for (const e of stored.events) this.nextEventId = Math.max(this.nextEventId, e.id + 1);
    if (stored.dueAt !== null) {
      this.scheduled.push(stored);
      if (stored.dueAt < this.nextDue) this.nextDue = stored.dueAt;
    }
    this.weigh(stored);
    this.changes++;
    return stored;
  }

  /** The message with this id in this account (any account when `account` is undefined). */
  get(id: number, account?: string): StoredMessage | undefined {
    const found = this.byId.get(id);
    return found && (account === undefined || found.account === account) ? found : undefined;
  }

  /** Up to `limit` messages of an account, newest first. */
  list(account: string, limit: number): StoredMessage[] {
    const out: StoredMessage[] = [];
    for (let i = this.order.length - 1; i >= 0 && out.length < limit; i--) {
      if (this.order[i].account === account) out.push(this.order[i]);
    }
    return out;
  }

  /** Every message, oldest first. */
  all(): StoredMessage[] {
    return [...this.order];
  }

  /** Records an open or click and updates the counters and first-time stamps. */
  addEvent(msg: StoredMessage, type: 'open' | 'click', url: string | null, now: number): SandboxEmailEvent {
    const event: SandboxEmailEvent = { id: this.nextEventId++, type, url, occurredAt: iso(now) };
    msg.events.push(event);
    const d = msg.detail;
    if (type === 'open') {
      d.openCount++;
      d.openedAt ??= event.occurredAt;
    } else {
      d.clickCount++;
      d.clickedAt ??= event.occurredAt;
    }
    d.updatedAt = event.occurredAt;
    this.changes++;
    return event;
  }

  /** Marks scheduled messages whose time has come as sent (cheap when none is due). */
  flushDue(now: number): void {
    if (now < this.nextDue) return;
    let next = Infinity;
    this.scheduled = this.scheduled.filter((msg) => {
      if (msg.dueAt === null || msg.detail.status !== 'scheduled') return false;
      if (msg.dueAt > now) {
        if (msg.dueAt < next) next = msg.dueAt;
        return true;
      }
      msg.detail.status = 'sent';
      msg.detail.providerEmailId = `sandbox-${msg.detail.id}`;
      msg.detail.updatedAt = iso(msg.dueAt);
      this.onSent?.(msg, msg.dueAt);
      msg.dueAt = null;
      return false;
    });
    this.nextDue = next;
    this.changes++;
  }

  /** Forgets one message (the outbox page's delete); answers whether it was held. Ids are not reused. */
  remove(id: number): boolean {
    const msg = this.byId.get(id);
    if (!msg) return false;
    this.byId.delete(id);
    this.bytes -= msg.weight ?? 0;
    this.order = this.order.filter((m) => m !== msg);
    this.scheduled = this.scheduled.filter((m) => m !== msg);
    this.changes++;
    return true;
  }

  /** Forgets every message but keeps counting ids (the outbox page's clear; `clear()` restarts them). */
  removeAll(): void {
    this.byId.clear();
    this.bytes = 0;
    this.order = [];
    this.scheduled = [];
    this.nextDue = Infinity;
    this.changes++;
  }

  /** Forgets everything; ids start from 1 again. */
  clear(): void {
    this.byId.clear();
    this.bytes = 0;
    this.order = [];
    this.scheduled = [];
    this.nextDue = Infinity;
    this.nextId = 1;
    this.nextEventId = 1;
    this.changes++;
  }

  /** Counts changes (new messages, events, status moves, clears): a cheap way to see that something moved. */
  get version(): number {
    return this.changes;
  }

  /** Notes a change made to a record from outside (e.g. a status set by hand). */
  touch(): void {
    this.changes++;
  }

  /** Number of messages held. */
  get size(): number {
    return this.byId.size;
  }

  private evictOldest(): void {
    this.dropOldest(Math.max(1, Math.floor(this.maxMessages / 10)));
  }

  /** Forgets the `count` oldest messages. */
  private dropOldest(count: number): void {
    if (count <= 0) return;
    const removed = this.order.splice(0, count);
    for (const msg of removed) {
      this.byId.delete(msg.detail.id);
      this.bytes -= msg.weight ?? 0;
    }
    this.scheduled = this.scheduled.filter((msg) => this.byId.has(msg.detail.id));
  }
}
