import type { SandboxBounce, SandboxBounceStatus } from './sandbox.bounces.js';
import type { SandboxSentMessage } from './sandbox.mailbox.js';
import type { SandboxMailboxOptions } from './sandbox.options.js';

type WireMessage = Omit<SandboxSentMessage, 'attachments'> & {
  attachments: Array<Omit<SandboxSentMessage['attachments'][number], 'content'> & { content: string | null }>;
};

/**
 * `fetch`, with one more try for a read whose kept-alive connection the sandbox closed in the meantime
 * (it restarted, say): a read changes nothing, so asking again is safe.
 */
async function fetchOnce(url: string, init?: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (err) {
    const code = (err as { cause?: { code?: unknown } }).cause?.code;
    const read = (init?.method ?? 'GET') === 'GET';
    if (!read || (code !== 'UND_ERR_SOCKET' && code !== 'ECONNRESET')) throw err;
    return fetch(url, init);
  }
}

async function call(url: string, init?: RequestInit): Promise<Response> {
  const res = await fetchOnce(url, init);
  if (!res.ok) {
    const text = await res.text();
    let message = text;
    try {
      message = (JSON.parse(text) as { error?: string }).error ?? text;
    } catch {
      // not JSON: the text as it came
    }
    throw new Error(`the sandbox at ${url} answered ${res.status}: ${message}`);
  }
  return res;
}

/**
 * A mailbox of a sandbox running in another process, reached over HTTP: what a test file uses when one
 * sandbox serves the whole run from a Jest or Vitest `globalSetup`. Needs the sandbox's admin routes
 * (`admin: true`, the default). Its `sent()` is asynchronous: `expect(await mailbox.sent()).toHaveSent(...)`.
 *
 * @example
 * const mailbox = await RemoteSandboxMailbox.create(process.env.EMAIL_SANDBOX_URL!);
 * Object.assign(process.env, mailbox.env());
 * expect(await mailbox.sent()).toHaveSent({ to: 'ada@example.org' });
 * await mailbox.close();
 * @publicApi
 */
export class RemoteSandboxMailbox {
  private constructor(
    /** The mailbox's name. */
    readonly name: string,
    /** The key that reaches it. */
    readonly apiKey: string,
    /** Base URL to give the client (the sandbox's). */
    readonly baseUrl: string,
  ) {}

  /**
   * Makes a fresh mailbox on the sandbox at `sandboxUrl` (its `baseUrl`).
   * @example
   * const mailbox = await RemoteSandboxMailbox.create('http://127.0.0.1:4010', { domains: ['shop.test'] });
   */
  static async create(
    sandboxUrl: string,
    options: SandboxMailboxOptions = {},
  ): Promise<RemoteSandboxMailbox> {
    const base = sandboxUrl.replace(/\/+$/, '');
    const res = await call(`${base}/__sandbox/mailboxes`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(options),
    });
    const made = (await res.json()) as { name: string; apiKey: string };
    return new RemoteSandboxMailbox(made.name, made.apiKey, base);
  }

  /** `{ EMAIL_API_KEY, EMAIL_BASE_URL }` (another prefix when given) pointing at this mailbox. */
  env(prefix = 'EMAIL_'): Record<string, string> {
    return { [`${prefix}API_KEY`]: this.apiKey, [`${prefix}BASE_URL`]: this.baseUrl };
  }

  /** Every message of the mailbox, oldest first, as `SandboxSentMessage`s (fetched now). */
  async sent(): Promise<SandboxSentMessage[]> {
    const res = await call(`${this.baseUrl}/__sandbox/mailboxes/${encodeURIComponent(this.name)}/sent`);
    const wire = (await res.json()) as WireMessage[];
    return wire.map((m) => ({
      ...m,
      attachments: m.attachments.map((a) => ({
        ...a,
        content: a.content === null ? null : Buffer.from(a.content, 'base64'),
      })),
    }));
  }

  /**
   * Makes `address` bounce in this mailbox, as `SandboxMailbox.bounce` does: mail to it is accepted, and its
   * records read `bounced` once sent (with `{ existing: true }`, the sent ones already held too).
   */
  async bounce(address: string, options: { existing?: boolean } = {}): Promise<void> {
    await this.mark(address, 'bounced', options);
  }

  /** As `bounce`, for a recipient who marked the mail as spam: its records read `complained`. */
  async complain(address: string, options: { existing?: boolean } = {}): Promise<void> {
    await this.mark(address, 'complained', options);
  }

  /** The addresses this mailbox makes bounce or complain (fetched now). */
  async bounces(): Promise<SandboxBounce[]> {
    return (await (await call(this.route('bounces'))).json()) as SandboxBounce[];
  }

  /** Stops making `address` bounce or complain (records already changed stay); answers whether it did. */
  async clearBounce(address: string): Promise<boolean> {
    const res = await call(this.route('bounces/remove'), jsonPost({ address }));
    return ((await res.json()) as { cleared: boolean }).cleared;
  }

  /** Removes the mailbox from the sandbox (its key is answered 401 from then on). */
  async close(): Promise<void> {
    const res = await call(`${this.baseUrl}/__sandbox/mailboxes/${encodeURIComponent(this.name)}/close`, {
      method: 'POST',
    });
    await res.body?.cancel();
  }

  private async mark(address: string, status: SandboxBounceStatus, options: { existing?: boolean }) {
    const body = {
      address,
      status,
      ...(options.existing === undefined ? {} : { existing: options.existing }),
    };
    const res = await call(this.route('bounces'), jsonPost(body));
    await res.body?.cancel();
  }

  private route(path: string): string {
    return `${this.baseUrl}/__sandbox/mailboxes/${encodeURIComponent(this.name)}/${path}`;
  }
}

function jsonPost(body: unknown): RequestInit {
  return { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
}
