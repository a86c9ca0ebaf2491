import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PAGE_PATH } from './page/page.assets.js';
import { createRouter } from './sandbox.handler.js';
import { SandboxMailbox } from './sandbox.mailbox.js';
import type { SandboxMailboxOptions, SandboxOptions } from './sandbox.options.js';
import { SandboxPersistence } from './sandbox.persist.js';
import { SandboxRegistry } from './sandbox.registry.js';
import { checkAllowedHosts } from './sandbox.host.js';

/**
 * A local emulator of the Transactional Email Service, on 127.0.0.1, for e2e tests and local
 * development: the contract's rules, a movable clock, real tracking links and fault injection.
 * The sandbox is itself a mailbox (the default one, with the keys and options it was started with);
 * `mailbox()` adds isolated ones on the same server, e.g. one per test file.
 *
 * @example
 * const sandbox = await EmailSandbox.start();
 * console.log(`Outbox: ${sandbox.uiUrl}`); // open it in a browser
 * // EmailModule.forRoot({ apiKey: sandbox.apiKey, baseUrl: sandbox.baseUrl })
 * await sandbox.close();
 * @publicApi
 */
export class EmailSandbox extends SandboxMailbox {
  /**
   * The sandbox page to open in a browser: every message, live, with its html, text, attachments and
   * events, and buttons for opens, clicks, the clock and faults. Null when started with `admin: false`.
   */
  readonly uiUrl: string | null;
  /** The port it listens on. */
  readonly port: number;

  private closing: Promise<void> | null = null;

  private constructor(
    registry: SandboxRegistry,
    private readonly server: Server,
    private readonly timers: Set<NodeJS.Timeout>,
    private readonly persistence: SandboxPersistence | null,
  ) {
    const port = (server.address() as AddressInfo).port;
    const origin = `http://127.0.0.1:${port}`;
    const core = registry.default;
    super(core, origin + core.basePath, registry);
    this.port = port;
    this.uiUrl = core.admin ? origin + core.basePath + PAGE_PATH : null;
    registry.listening(origin);
  }

  /**
   * Starts a sandbox on 127.0.0.1 (a free port unless `port` is given).
   * @example
   * const sandbox = await EmailSandbox.start({ plan: 'free', tracking: { opens: true } });
   */
  static async start(options: SandboxOptions = {}): Promise<EmailSandbox> {
    const allowedHosts = checkAllowedHosts(options.allowedHosts);
    const registry = new SandboxRegistry(options);
    const persistence = options.dataDir ? new SandboxPersistence(registry, options.dataDir) : null;
    persistence?.load();
    const timers = new Set<NodeJS.Timeout>();
    const server = createServer({ keepAliveTimeout: 5000 }, createRouter(registry, timers, allowedHosts));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    if (options.ref === false) server.unref();
    persistence?.watch();
    return new EmailSandbox(registry, server, timers, persistence);
  }

  /**
   * A new isolated mailbox on this sandbox: its own API key, verified domains, message log (ids from
   * 1), idempotency keys, quota, faults and clock. Requests with its key see only its mail; the
   * sandbox page lists it in its mailbox switcher. `mailbox.close()` removes it.
   *
   * @example
   * const mailbox = sandbox.mailbox({ domains: ['shop.test'] });
   * // EmailModule.forRoot({ apiKey: mailbox.apiKey, baseUrl: mailbox.baseUrl })
   */
  mailbox(options: SandboxMailboxOptions = {}): SandboxMailbox {
    const core = this.registry.add(options);
    return new SandboxMailbox(core, this.baseUrl, this.registry);
  }

  /** Names of the mailboxes the sandbox serves, `'default'` first. */
  mailboxes(): string[] {
    return this.registry.all().map((core) => core.name);
  }

  /** Stops listening and drops every open connection (pending delays never answer). */
  override close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      this.persistence?.close();
      for (const core of this.registry.all()) core.faults.clear();
      for (const t of this.timers) clearTimeout(t);
      this.timers.clear();
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
    return this.closing;
  }
}
