import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OUTBOX_PATH } from './outbox/outbox.assets.js';
import type { SandboxClock } from './sandbox.clock.js';
import { SandboxCore, type SandboxLimitCounts } from './sandbox.core.js';
import type { SandboxFaults } from './sandbox.faults.js';
import type { SandboxOptions } from './sandbox.options.js';
import { copyDetail, type SandboxEmailDetail, type SandboxEmailEvent } from './sandbox.records.js';
import type { SandboxRequestRecord } from './sandbox.requests.js';
import { createRouter } from './sandbox.handler.js';
import type { StoredMessage } from './sandbox.store.js';
import { TRACKING_PATH, trackingRefusal } from './sandbox.tracking.js';

/**
 * A local emulator of the Transactional Email Service, on 127.0.0.1, for e2e tests and local
 * development: the contract's rules, a movable clock, real tracking links and fault injection.
 *
 * @example
 * const sandbox = await EmailSandbox.start();
 * console.log(`Outbox: ${sandbox.uiUrl}`); // open it in a browser
 * // EmailModule.forRoot({ apiKey: sandbox.apiKey, baseUrl: sandbox.baseUrl })
 * await sandbox.close();
 * @publicApi
 */
export class EmailSandbox {
  /** Base URL to give the client, e.g. `http://127.0.0.1:43121` (with the base path, if any). */
  readonly baseUrl: string;
  /**
   * The outbox page to open in a browser: every message, live, with its html, text, attachments and
   * events, and buttons for opens, clicks, the clock and faults. Null when started with `admin: false`.
   */
  readonly uiUrl: string | null;
  /** The first (by default the only) API key. */
  readonly apiKey: string;
  /** The port it listens on. */
  readonly port: number;
  /** The sandbox clock; moving it sends due scheduled messages. */
  readonly clock: SandboxClock;
  /** Fault injection: `add`, `random`, `clear`, `injected`. */
  readonly faults: SandboxFaults;

  private closing: Promise<void> | null = null;

  private constructor(
    private readonly core: SandboxCore,
    private readonly server: Server,
    private readonly timers: Set<NodeJS.Timeout>,
  ) {
    this.port = (server.address() as AddressInfo).port;
    const origin = `http://127.0.0.1:${this.port}`;
    this.baseUrl = origin + core.basePath;
    this.uiUrl = core.admin ? origin + core.basePath + OUTBOX_PATH : null;
    this.apiKey = core.primaryKey;
    this.clock = core.clock;
    this.faults = core.faults;
    core.trackingBase = origin + core.basePath + TRACKING_PATH;
  }

  /**
   * Starts a sandbox on 127.0.0.1 (a free port unless `port` is given).
   * @example
   * const sandbox = await EmailSandbox.start({ plan: 'free', tracking: { opens: true } });
   */
  static async start(options: SandboxOptions = {}): Promise<EmailSandbox> {
    const core = new SandboxCore(options);
    const timers = new Set<NodeJS.Timeout>();
    const server = createServer({ keepAliveTimeout: 5000 }, createRouter(core, timers));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    return new EmailSandbox(core, server, timers);
  }

  /** Every accepted key. */
  get keys(): string[] {
    return [...this.core.keys.keys()];
  }

  /** Every message held (all accounts), oldest first, with bodies. */
  messages(): SandboxEmailDetail[] {
    this.core.tick();
    return this.core.store.all().map((m) => copyDetail(m.detail));
  }

  /** One message with bodies, or undefined. */
  message(id: number): SandboxEmailDetail | undefined {
    this.core.tick();
    const msg = this.core.store.get(id);
    return msg && copyDetail(msg.detail);
  }

  /** Events of a message, newest first (empty for an unknown id). */
  events(id: number): SandboxEmailEvent[] {
    return (this.core.store.get(id)?.events ?? []).map((e) => ({ ...e })).reverse();
  }

  /** Requests received on contract routes (the last `maxRequestLog`), oldest first, key masked. */
  requests(): SandboxRequestRecord[] {
    return this.core.requests.list();
  }

  /** Records an open as if the pixel were fetched; throws when tracking does not apply. */
  simulateOpen(id: number): SandboxEmailEvent {
    return this.simulate(id, 'open', null);
  }

  /** Records a click on `url` (default: the first tracked link); throws when tracking does not apply. */
  simulateClick(id: number, url?: string): SandboxEmailEvent {
    const msg = this.core.store.get(id);
    return this.simulate(id, 'click', url ?? msg?.links[0] ?? null);
  }

  /**
   * Sets a message's status (and error text) by hand, e.g. to see how an app handles `bounced`.
   * @example
   * sandbox.setStatus(3, 'failed', 'mailbox unavailable');
   */
  setStatus(id: number, status: string, errorMessage: string | null = null): SandboxEmailDetail {
    const msg = this.mustGet(id);
    Object.assign(msg.detail, { status, errorMessage, updatedAt: this.clock.date().toISOString() });
    if (status !== 'scheduled') msg.dueAt = null;
    this.core.store.touch();
    return copyDetail(msg.detail);
  }

  /**
   * How many requests the `quota` and `rateLimit` options answered 429 so far (injected faults are
   * not counted here): what a client's own rate limit should keep at zero.
   * @example
   * expect(sandbox.limited()).toEqual({ quota: 0, rate: 0 });
   */
  limited(): SandboxLimitCounts {
    return this.core.limited();
  }

  /** Forgets messages, idempotency keys, quota windows, requests and faults; the clock restarts. */
  reset(): void {
    this.core.reset();
  }

  /** Stops listening and drops every open connection (pending delays never answer). */
  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      this.core.faults.clear();
      for (const t of this.timers) clearTimeout(t);
      this.timers.clear();
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
    return this.closing;
  }

  private simulate(id: number, type: 'open' | 'click', url: string | null): SandboxEmailEvent {
    const now = this.core.tick();
    const msg = this.mustGet(id);
    const refusal = trackingRefusal(msg, type);
    if (refusal) throw new Error(refusal);
    if (type === 'click' && url === null) throw new Error(`email ${id} has no link to click; pass a url`);
    return this.core.store.addEvent(msg, type, url, now);
  }

  private mustGet(id: number): StoredMessage {
    const msg = this.core.store.get(id);
    if (!msg) throw new Error(`email ${id} does not exist in the sandbox`);
    return msg;
  }
}
