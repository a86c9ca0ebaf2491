import { SandboxCore } from './sandbox.core.js';
import { SandboxHttpError } from './sandbox.http.js';
import { generateSandboxKey, type SandboxMailboxOptions, type SandboxOptions } from './sandbox.options.js';
import { TRACKING_PATH } from './sandbox.tracking.js';

const NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/i;

/**
 * The mailboxes of one sandbox server: the default one (the sandbox's own keys and options) and
 * every one made by `sandbox.mailbox()`. A request is served by the mailbox its API key belongs to;
 * mailboxes share nothing but the server.
 */
export class SandboxRegistry {
  readonly default: SandboxCore;
  private readonly byName = new Map<string, SandboxCore>();
  private readonly byKey = new Map<string, SandboxCore>();
  private serial = 0;
  private changes = 0;
  /** `http://127.0.0.1:<port>` once the server listens. */
  private origin = '';

  constructor(private readonly options: SandboxOptions) {
    this.default = new SandboxCore(options);
    this.register(this.default);
  }

  /** Sets where the server listens; tracking links of every mailbox follow from it. */
  listening(origin: string): void {
    this.origin = origin;
    for (const core of this.byName.values()) core.trackingBase = this.trackingBase(core.name);
  }

  /** Adds a mailbox with its own key, log, idempotency, quota, faults and clock. */
  add(options: SandboxMailboxOptions = {}): SandboxCore {
    const name = options.name ?? this.freeName();
    if (!NAME.test(name) || name === 'default') {
      throw new TypeError(`mailbox name ${JSON.stringify(name)}: letters, digits, _ and -, not "default"`);
    }
    if (this.byName.has(name)) throw new TypeError(`the sandbox already has a mailbox named ${name}`);
    const o = this.options;
    const core = new SandboxCore(
      {
        basePath: o.basePath,
        admin: o.admin,
        allowSubdomains: o.allowSubdomains,
        unknownFields: o.unknownFields,
        batchInvalidItem: o.batchInvalidItem,
        idempotencyTtlMs: o.idempotencyTtlMs,
        idempotencyScope: options.idempotencyScope ?? o.idempotencyScope,
        maxMessages: options.maxMessages ?? o.maxMessages,
        maxKeptBytes: o.maxKeptBytes,
        maxRequestLog: o.maxRequestLog,
        maxBodyBytes: o.maxBodyBytes,
        keys: [options.apiKey ?? generateSandboxKey()],
        domains: options.domains ?? o.domains,
        plan: options.plan ?? o.plan,
        tracking: options.tracking ?? o.tracking,
        templates: options.templates ?? o.templates,
        quota: options.quota ?? null,
        rateLimit: options.rateLimit ?? null,
        clock: options.clock,
      },
      name,
    );
    if (this.byKey.has(core.primaryKey))
      throw new TypeError('that API key already belongs to another mailbox');
    this.register(core);
    core.trackingBase = this.trackingBase(name);
    return core;
  }

  /** Forgets a mailbox: its key is answered 401 from now on. The default mailbox stays. */
  remove(core: SandboxCore): void {
    if (core === this.default || this.byName.get(core.name) !== core) return;
    this.byName.delete(core.name);
    for (const key of core.keys.keys()) this.byKey.delete(key);
    core.faults.clear();
    this.changes++;
  }

  /**
   * Adds a key to a mailbox (a fresh random `sk_test_…` one when none is given): it reaches the same
   * account, message log and quota, and the registry sends its requests to that mailbox.
   */
  addKey(core: SandboxCore, key: string = generateSandboxKey()): string {
    this.checkOpen(core);
    if (this.byKey.has(key)) throw new TypeError('that API key already belongs to a mailbox of this sandbox');
    core.addKey(key);
    this.byKey.set(key, core);
    this.changes++;
    return key;
  }

  /**
   * Revokes a key of a mailbox: its requests are still that mailbox's (its request log shows them) and
   * are answered 401.
   */
  revokeKey(core: SandboxCore, key: string): void {
    this.checkOpen(core);
    if (this.byKey.get(key) !== core) throw new TypeError(`the ${core.name} mailbox has no such key`);
    core.revokeKey(key);
    this.changes++;
  }

  /**
   * The mailbox that owns the key in an `Authorization` header, or null when no mailbox does (no
   * header, an unknown key, the key of a closed mailbox): such a request is answered 401 and touches
   * no mailbox (its faults, its request log).
   */
  forAuthorization(header: string | undefined): SandboxCore | null {
    if (header && header.length > 7 && header.slice(0, 7).toLowerCase() === 'bearer ') {
      return this.byKey.get(header.slice(7).trim()) ?? null;
    }
    return null;
  }

  /** The mailbox with this name; 404 when there is none. */
  named(name: string | null | undefined): SandboxCore {
    if (!name || name === 'default') return this.default;
    const core = this.byName.get(name);
    if (!core) throw new SandboxHttpError(404, `the sandbox has no mailbox named ${name}`);
    return core;
  }

  /** Every mailbox, the default first, then in the order they were made. */
  all(): SandboxCore[] {
    return [...this.byName.values()];
  }

  /** Changes anywhere (a mailbox added or removed, or a change inside one): cheap to compare. */
  signature(): string {
    let messages = 0;
    let faults = 0;
    for (const core of this.byName.values()) {
      messages += core.store.version;
      const f = core.faults;
      faults += f.injected + f.active().rules.reduce((n, r) => n + 1 + r.remaining + r.hits, 0);
    }
    return `${this.changes}.${messages}.${faults}`;
  }

  /** Promotes due scheduled messages in every mailbox. */
  tick(): void {
    for (const core of this.byName.values()) core.tick();
  }

  private checkOpen(core: SandboxCore): void {
    if (this.byName.get(core.name) !== core) throw new TypeError(`the ${core.name} mailbox is closed`);
  }

  private register(core: SandboxCore): void {
    this.byName.set(core.name, core);
    for (const key of core.keys.keys()) this.byKey.set(key, core);
    this.changes++;
  }

  private trackingBase(name: string): string {
    const base = this.origin + this.default.basePath + TRACKING_PATH;
    return name === 'default' ? base : `${base}m/${name}/`;
  }

  private freeName(): string {
    let name: string;
    do name = `mailbox-${++this.serial}`;
    while (this.byName.has(name));
    return name;
  }
}
