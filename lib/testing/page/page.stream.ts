import type { ServerResponse } from 'node:http';
import type { SandboxRegistry } from '../sandbox.registry.js';

const CHECK_MS = 50;
const PING_MS = 15_000;

/**
 * The sandbox page's live feed (server-sent events): a `change` event whenever messages, events,
 * faults or mailboxes move (in any mailbox). While at least one page listens, a light timer looks for changes (and promotes
 * scheduled messages that fell due in real time); with none, nothing runs.
 */
export class PageStream {
  private readonly clients = new Set<ServerResponse>();
  private timer: NodeJS.Timeout | null = null;
  private last = '';
  private quietMs = 0;

  constructor(
    private readonly registry: SandboxRegistry,
    private readonly timers: Set<NodeJS.Timeout>,
  ) {}

  /** Turns a response into an event stream that lives until the page goes away. */
  attach(res: ServerResponse, headers: Record<string, string>): void {
    res.writeHead(200, {
      ...headers,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
    });
    res.write(`retry: 1000\nevent: change\ndata: ${this.signature()}\n\n`);
    this.clients.add(res);
    res.once('close', () => {
      this.clients.delete(res);
      if (this.clients.size === 0) this.stop();
    });
    if (!this.timer) {
      this.last = this.signature();
      this.timer = setInterval(() => this.check(), CHECK_MS);
      this.timer.unref();
      this.timers.add(this.timer);
    }
  }

  private check(): void {
    this.registry.tick();
    const now = this.signature();
    this.quietMs += CHECK_MS;
    if (now !== this.last) {
      this.last = now;
      this.broadcast(`event: change\ndata: ${now}\n\n`);
    } else if (this.quietMs >= PING_MS) {
      this.broadcast(': ping\n\n');
    }
  }

  private broadcast(frame: string): void {
    this.quietMs = 0;
    for (const res of this.clients) res.write(frame);
  }

  private signature(): string {
    return this.registry.signature();
  }

  private stop(): void {
    if (!this.timer) return;
    clearInterval(this.timer);
    this.timers.delete(this.timer);
    this.timer = null;
  }
}
