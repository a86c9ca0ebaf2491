import { EmailSandbox, type SandboxFaultRule, type SandboxMailbox } from '../../lib/testing/index.js';
import { inline, RawClient } from './sandbox.client.js';
import { useSandbox } from '../support/sandbox.js';

const KEY = 'fault-test-key-000001';
const resetCode = (err: any): string | undefined => err?.code ?? err?.cause?.code;

// One sandbox for the file; the random-fault specs use a mailbox of their own on it.
const server = useSandbox();

describe('EmailSandbox fault injection', () => {
  let sandbox: EmailSandbox;
  const client = new RawClient(() => sandbox);

  beforeAll(() => {
    sandbox = server;
  });
  beforeEach(() => sandbox.reset());
  afterAll(() => client.close());

  it.each([500, 502, 503] as const)('status %i: answers {error} and processes nothing', async (status) => {
    sandbox.faults.add({ route: 'POST /emails', mode: 'status', status });
    const res = await client.send(inline(), { idempotencyKey: KEY });
    expect(res.status).toBe(status);
    expect(typeof res.json.error).toBe('string');
    expect(sandbox.messages()).toHaveLength(0);
    const retry = await client.send(inline(), { idempotencyKey: KEY });
    expect(retry.status).toBe(201);
    expect(sandbox.faults.injected).toBe(1);
  });

  it('status 429 carries Retry-After', async () => {
    sandbox.faults.add({ mode: 'status', status: 429, retryAfter: 7 });
    const res = await client.call('GET', '/emails');
    expect(res.status).toBe(429);
    expect(res.headers['retry-after']).toBe('7');
  });

  it('drop-before: the client sees a reset and nothing is created', async () => {
    sandbox.faults.add({ route: 'POST /emails', mode: 'drop-before' });
    const err = await client.send(inline(), { idempotencyKey: KEY }).catch((e: unknown) => e);
    expect(['ECONNRESET', 'UND_ERR_SOCKET']).toContain(resetCode(err));
    expect(sandbox.messages()).toHaveLength(0);
    expect(sandbox.requests()[0].fault).toBe('drop-before');
    expect(sandbox.requests()[0].status).toBeNull();
    expect((await client.send(inline(), { idempotencyKey: KEY })).status).toBe(201);
  });

  it('drop-after: the message exists, the client saw a reset, and a retry with the key returns it', async () => {
    sandbox.faults.add({ route: 'POST /emails', mode: 'drop-after' });
    const err = await client.send(inline(), { idempotencyKey: KEY }).catch((e: unknown) => e);
    expect(['ECONNRESET', 'UND_ERR_SOCKET']).toContain(resetCode(err));
    const held = sandbox.messages();
    expect(held).toHaveLength(1);
    expect((await client.call('GET', '/emails')).json[0].id).toBe(held[0].id);
    const retry = await client.send(inline(), { idempotencyKey: KEY });
    expect(retry.status).toBe(201);
    expect(retry.json.id).toBe(held[0].id);
    expect(sandbox.messages()).toHaveLength(1);
  });

  it('fail-after: answers 500 although the message was created', async () => {
    sandbox.faults.add({ route: 'POST /emails', mode: 'fail-after' });
    const res = await client.send(inline(), { idempotencyKey: KEY });
    expect(res.status).toBe(500);
    expect(typeof res.json.error).toBe('string');
    expect(sandbox.messages()).toHaveLength(1);
    const retry = await client.send(inline(), { idempotencyKey: KEY });
    expect(retry.json.id).toBe(sandbox.messages()[0].id);
  });

  it('fail-after also works for batches (created, answer 502)', async () => {
    sandbox.faults.add({ route: 'POST /emails/batch', mode: 'fail-after', status: 502 });
    const res = await client.call('POST', '/emails/batch', { body: [inline(), inline()] });
    expect(res.status).toBe(502);
    expect(sandbox.messages()).toHaveLength(2);
  });

  it('delay before: answers late, then normally', async () => {
    sandbox.faults.add({ route: 'GET /emails', mode: 'delay', ms: 200 });
    const t0 = Date.now();
    const res = await client.call('GET', '/emails');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(190);
    expect(res.status).toBe(200);
  });

  it('delay after: the message exists before the answer arrives', async () => {
    sandbox.faults.add({ route: 'POST /emails', mode: 'delay', ms: 300, at: 'after' });
    const pending = client.send(inline());
    await new Promise((r) => setTimeout(r, 100));
    expect(sandbox.messages()).toHaveLength(1);
    expect((await pending).status).toBe(201);
  });

  it('hang before: no answer (the client times out) and nothing created', async () => {
    sandbox.faults.add({ route: 'POST /emails', mode: 'hang' });
    const err = await client.send(inline(), { signal: AbortSignal.timeout(200) }).catch((e: unknown) => e);
    expect((err as Error).name).toMatch(/Abort|Timeout/);
    expect(sandbox.messages()).toHaveLength(0);
  });

  it('hang after: created, no answer; once the client gives up a retry with the key returns it', async () => {
    sandbox.faults.add({ route: 'POST /emails', mode: 'hang', at: 'after' });
    const err = await client
      .send(inline(), { idempotencyKey: KEY, signal: AbortSignal.timeout(200) })
      .catch((e: unknown) => e);
    expect((err as Error).name).toMatch(/Abort|Timeout/);
    expect(sandbox.messages()).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 50));
    const retry = await client.send(inline(), { idempotencyKey: KEY });
    expect(retry.status).toBe(201);
    expect(retry.json.id).toBe(sandbox.messages()[0].id);
  });

  it('targets only the given route, for `times` requests after `skip`', async () => {
    const handle = sandbox.faults.add({
      route: 'POST /emails',
      mode: 'status',
      status: 503,
      times: 2,
      skip: 1,
    });
    expect((await client.call('GET', '/emails')).status).toBe(200);
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await client.send(inline())).status);
    expect(statuses).toEqual([201, 503, 503, 201]);
    expect(handle.hits).toBe(2);
    expect(handle.remaining).toBe(0);
    expect(sandbox.faults.counts()).toEqual({ status: 2 });
  });

  it('applies rules in order and can remove or clear them', async () => {
    const first = sandbox.faults.add({ mode: 'status', status: 502, times: Infinity });
    sandbox.faults.add({ mode: 'status', status: 503, times: Infinity });
    expect((await client.call('GET', '/emails')).status).toBe(502);
    first.remove();
    expect((await client.call('GET', '/emails')).status).toBe(503);
    sandbox.faults.clear();
    expect((await client.call('GET', '/emails')).status).toBe(200);
  });

  it('faults read routes too (GET /emails/:id/events)', async () => {
    const { json } = await client.send(inline());
    sandbox.faults.add({ route: 'GET /emails/:id/events', mode: 'status', status: 500 });
    expect((await client.call('GET', `/emails/${json.id}`)).status).toBe(200);
    expect((await client.call('GET', `/emails/${json.id}/events`)).status).toBe(500);
  });

  it('records the applied fault in the request log', async () => {
    sandbox.faults.add({ mode: 'status', status: 503 });
    await client.call('GET', '/emails');
    await client.call('GET', '/emails');
    expect(sandbox.requests().map((r) => [r.fault, r.status])).toEqual([
      ['status 503', 503],
      [null, 200],
    ]);
  });
});

describe('EmailSandbox random faults (in a mailbox of their own)', () => {
  let sandbox: SandboxMailbox;
  const client = new RawClient(() => sandbox);

  beforeAll(() => {
    sandbox = server.mailbox({ name: 'random-faults' });
  });
  beforeEach(() => sandbox.reset());
  afterAll(async () => {
    await client.close();
    await sandbox.close();
  });

  const run = async (n: number): Promise<number[]> => {
    const out = [];
    for (let i = 0; i < n; i++) out.push((await client.call('GET', '/emails')).status);
    return out;
  };

  it('is reproducible with the same seed and counts what it injected', async () => {
    sandbox.faults.random({ probability: 0.3, seed: 42, modes: ['status'] });
    const a = await run(40);
    const injected = sandbox.faults.injected;
    sandbox.reset();
    sandbox.faults.random({ probability: 0.3, seed: 42, modes: ['status'] });
    const b = await run(40);
    expect(b).toEqual(a);
    const faulted = a.filter((s) => s !== 200);
    expect(faulted.length).toBe(injected);
    expect(faulted.length).toBeGreaterThan(3);
    expect(faulted.length).toBeLessThan(25);
    expect(faulted.every((s) => [500, 502, 503].includes(s))).toBe(true);
  });

  it('probability 0 injects nothing, probability 1 injects every time, only on the chosen routes', async () => {
    sandbox.faults.random({ probability: 0, seed: 1 });
    expect(await run(10)).toEqual(Array(10).fill(200));
    const fault: SandboxFaultRule = { mode: 'fail-after', status: 503 };
    sandbox.faults.random({ probability: 1, seed: 1, modes: [fault], routes: ['POST /emails'] });
    expect(await run(3)).toEqual([200, 200, 200]);
    expect((await client.send(inline())).status).toBe(503);
    expect(sandbox.messages()).toHaveLength(1);
    expect(sandbox.faults.injected).toBe(1);
  });

  it('rejects a probability outside 0 to 1', () => {
    expect(() => sandbox.faults.random({ probability: 1.5 })).toThrow(RangeError);
  });
});
