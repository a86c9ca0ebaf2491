/**
 * Issue 50, item 6: accounts leave memory. An account's desk (and so its key) goes when its cache entry
 * expires or is forgotten, its state (records held, open sends, limiter) once nothing of it is under way,
 * and `accountCacheMax` bounds how many are held at once. Shown with weak references to what each account
 * was given (its desk, its request loop, its limiter) after full garbage collections. On the code before the fix the expired desks stayed in the cache until the same account
 * called again, the states for ever, and `accountCacheMax` was refused as an unknown option.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { AccountDesk } from '../../lib/delivery/account-desk.store.js';
import type { EmailService } from '../../lib/index.js';
import { emailApp } from '../support/email-app.js';
import { json, startScriptedServer, type ScriptedServer } from '../support/scripted-server.js';

setFlagsFromString('--expose_gc');
const gc = runInNewContext('gc') as () => void;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A key no other string of the process holds: found in the heap only if something keeps it. */
const keyOf = (id: string) => `sk_live_heapprobe_${id}_${process.pid}_z9`;

let server: ScriptedServer;
const closing: Array<() => Promise<void>> = [];
beforeAll(async () => {
  server = await startScriptedServer((_req, res) => json(res, 200, []));
});
afterAll(() => server.close());
afterEach(async () => {
  await Promise.all(closing.splice(0).map((c) => c()));
});

async function app(options: Record<string, unknown>): Promise<EmailService> {
  const built = await emailApp({
    apiKey: undefined,
    baseUrl: server.url,
    accounts: (id: string) => ({
      apiKey: keyOf(id),
      rateLimit: { requests: { limit: 100, intervalMs: 1000 } },
    }),
    maxRetries: 0,
    ...options,
  });
  closing.push(built.close);
  return built.email;
}

/**
 * Each account calls once (a list), and hands back weak references to what it was given: its desk (which
 * holds its key), its request loop (which holds the transport and the redactor, each with the key) and
 * its limiter (its state).
 */
async function serve(email: EmailService, ids: readonly string[]): Promise<WeakRef<object>[]> {
  const refs: WeakRef<object>[] = [];
  for (const account of ids) {
    await email.list({ account, limit: 1 });
    const desk = (await email.deskFor({ account })) as AccountDesk;
    refs.push(new WeakRef(desk), new WeakRef(desk.engine), new WeakRef(desk.rate!));
  }
  return refs;
}

/** How many of `refs` still reach their object after full collections (polled until `ms`). */
async function alive(refs: readonly WeakRef<object>[], ms: number): Promise<number> {
  const until = Date.now() + ms;
  for (;;) {
    await sleep(50); // a WeakRef's target is kept until the turn that made it ended
    gc();
    const count = refs.filter((r) => r.deref() !== undefined).length;
    if (count === 0 || Date.now() > until) return count;
  }
}

const idsOf = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

describe('accounts leave memory (issue 50, item 6)', () => {
  it('an expired account keeps nothing: its desk, what holds its key and its limiter are collected', async () => {
    const email = await app({ accountCacheTtlMs: 50 });
    const ids = idsOf('expired', 200);
    const refs = await serve(email, ids);
    expect(server.requests.length).toBeGreaterThanOrEqual(200);
    // No call for any of them again: only expiry can let them go.
    expect(await alive(refs, 15_000)).toBe(0);
  });

  it('a forgotten account keeps nothing, long before its entry would expire', async () => {
    const email = await app({ accountCacheTtlMs: 600_000 });
    const ids = idsOf('forgotten', 100);
    const refs = await serve(email, ids);
    for (const id of ids) email.forgetAccount(id);
    expect(await alive(refs, 15_000)).toBe(0);
  });

  it('accountCacheMax bounds the accounts held at once, whatever the TTL', async () => {
    const email = await app({ accountCacheTtlMs: 600_000, accountCacheMax: 20 });
    const ids = idsOf('capped', 100);
    const refs = await serve(email, ids);
    // Only the desks (and limiters) of the last 20 accounts resolved may be held.
    expect(await alive(refs.slice(0, 240), 5_000)).toBe(0);
    expect(await alive(refs.slice(240), 200)).toBe(60);
    // A dropped account is resolved again on its next call, and works.
    await expect(email.list({ account: ids[0], limit: 1 })).resolves.toEqual([]);
  });

  it('accountCacheMax must be a positive integer', async () => {
    await expect(app({ accountCacheMax: 0 })).rejects.toThrow(/accountCacheMax/);
    await expect(app({ accountCacheMax: 2.5 })).rejects.toThrow(/accountCacheMax/);
  });
});
