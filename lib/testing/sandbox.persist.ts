import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SandboxBounce } from './sandbox.bounces.js';
import type { SandboxCore } from './sandbox.core.js';
import type { SandboxPlan } from './sandbox.options.js';
import type { SandboxRegistry } from './sandbox.registry.js';
import type { StoredMessage } from './sandbox.store.js';

/** File of the saved state inside the data directory. */
export const SANDBOX_DATA_FILE = 'sandbox.json';
const CHECK_MS = 500;

interface SavedMessage extends Omit<StoredMessage, 'detail'> {
  detail: StoredMessage['detail'];
  extras: {
    html: string | null;
    templateId: number | null;
    variables: Record<string, string> | null;
    attachments: Array<{ filename: string; contentType: string | null; content: string }>;
  };
  /** Its tags (absent in files written before messages had tags). */
  tags?: string[];
}

interface SavedMailbox {
  name: string;
  /** Every key, the first one first, added ones after it. */
  keys: string[];
  /** The keys revoked (absent in files written before keys could be revoked at run time). */
  revoked?: string[];
  domains: string[];
  plan: SandboxPlan;
  tracking: { opens: boolean; clicks: boolean };
  messages: SavedMessage[];
  /** The addresses it makes bounce or complain (absent in files written before mailboxes had them). */
  bounces?: SandboxBounce[];
}

function saveMailbox(core: SandboxCore): SavedMailbox {
  const first = core.keys.get(core.primaryKey);
  return {
    name: core.name,
    keys: [...core.keys.keys()],
    revoked: [...core.keys.values()].filter((k) => k.revoked).map((k) => k.key),
    domains: [...(first?.domains ?? [])],
    plan: first?.plan ?? 'growth',
    tracking: { opens: first?.trackOpens ?? false, clicks: first?.trackClicks ?? false },
    messages: core.store.all().map((m) => {
      const x = core.extras.of(m);
      return {
        ...m,
        extras: {
          html: x.html,
          templateId: x.templateId,
          variables: x.variables,
          attachments: x.attachments.map((a) => ({
            filename: a.filename,
            contentType: a.contentType,
            content: a.content?.toString('base64') ?? '',
          })),
        },
        tags: [...core.tags.of(m)],
      };
    }),
    bounces: core.bounces.list(),
  };
}

function restoreMessages(core: SandboxCore, messages: SavedMessage[]): void {
  for (const saved of messages) {
    const { extras, tags, ...stored } = saved;
    const msg = core.store.restore(stored);
    core.extras.keep(msg, extras, extras.html, extras.attachments);
    if (tags?.length) core.tags.add(msg, tags);
  }
}

/**
 * Keys a mailbox was given at run time (`addKey`, `revokeKey`), past its first. The default mailbox's
 * keys are the options' (the command line's `--key`), never the file's; a key another mailbox holds
 * now stays that mailbox's.
 */
function restoreKeys(registry: SandboxRegistry, core: SandboxCore, box: SavedMailbox): void {
  for (const key of box.keys) {
    if (!registry.forAuthorization(`Bearer ${key}`)) registry.addKey(core, key);
  }
  for (const key of box.revoked ?? []) {
    if (registry.forAuthorization(`Bearer ${key}`) === core) registry.revokeKey(core, key);
  }
}

/**
 * Keeps a sandbox's mailboxes, messages and bounces in `<dir>/sandbox.json` across restarts (`--data DIR`):
 * loads them at start, writes them (atomically) whenever something changed, checked twice a second
 * on an unref'd timer, and once more on close. Idempotency keys, quota windows, faults and clocks are
 * not kept: a restart begins those afresh.
 */
export class SandboxPersistence {
  private timer: NodeJS.Timeout | null = null;
  private saved = '';

  constructor(
    private readonly registry: SandboxRegistry,
    private readonly dir: string,
  ) {}

  /** Reads the saved state, if any, into the registry. */
  load(): void {
    let text: string;
    try {
      text = readFileSync(join(this.dir, SANDBOX_DATA_FILE), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    const data = JSON.parse(text) as { version: number; mailboxes: SavedMailbox[] };
    if (data.version !== 1) throw new Error(`${SANDBOX_DATA_FILE}: unknown version ${data.version}`);
    for (const box of data.mailboxes) {
      const core =
        box.name === 'default'
          ? this.registry.default
          : this.registry.add({
              name: box.name,
              apiKey: box.keys[0],
              domains: box.domains,
              plan: box.plan,
              tracking: box.tracking,
            });
      if (core !== this.registry.default) restoreKeys(this.registry, core, box);
      restoreMessages(core, box.messages);
      // messages as they were saved: their statuses already read bounced where they did
      for (const b of box.bounces ?? [])
        core.bounces.mark(b.address, b.status, false, core.store, core.tick());
    }
    this.saved = this.registry.signature();
  }

  /** Starts writing changes. */
  watch(): void {
    this.timer = setInterval(() => this.save(), CHECK_MS);
    this.timer.unref();
  }

  /** Writes the state when it changed since the last write. */
  save(): void {
    const signature = this.registry.signature();
    if (signature === this.saved) return;
    mkdirSync(this.dir, { recursive: true });
    const data = { version: 1, mailboxes: this.registry.all().map(saveMailbox) };
    const file = join(this.dir, SANDBOX_DATA_FILE);
    writeFileSync(`${file}.tmp`, JSON.stringify(data));
    renameSync(`${file}.tmp`, file);
    this.saved = signature;
  }

  /** Writes a last time and stops watching. */
  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.save();
  }
}
