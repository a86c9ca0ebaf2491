import { useSandbox } from '../support/sandbox.js';

// Attacks the sandbox's memory with large request bodies, unauthenticated ones included: the request
// log keeps bounded excerpts (2 MiB a body) and a bounded total (32 MiB), whatever arrives.

const MiB = 1024 * 1024;

describe('the sandbox keeps a bounded request log (defect 5)', () => {
  const sandbox = useSandbox();

  it('keeps an excerpt of each large body and forgets the oldest past the byte budget', async () => {
    const big = JSON.stringify({
      from: 'a@example.com',
      to: ['b@example.com'],
      subject: 'x',
      text: 'y'.repeat(3 * MiB),
    });
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await fetch(`${sandbox.baseUrl}/emails`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: i % 2 ? 'Bearer wrong-key' : `Bearer ${sandbox.apiKey}`,
        },
        body: big,
      });
      statuses.push(res.status);
      await res.arrayBuffer();
    }
    expect(statuses).toHaveLength(20);
    const log = sandbox.requests();
    const kept = log.reduce((n, r) => n + Buffer.byteLength(r.body), 0);
    expect(kept).toBeLessThanOrEqual(32 * MiB);
    expect(log.length).toBeGreaterThan(0);
    expect(log.length).toBeLessThan(20);
    for (const r of log) {
      expect(Buffer.byteLength(r.body)).toBeLessThanOrEqual(2 * MiB);
      expect(r.truncated).toBe(true);
      expect(r.bodyBytes).toBe(Buffer.byteLength(big));
      expect(r.json).toBeUndefined();
    }
    expect(log.at(-1)?.headers.authorization).toBe('Bearer ***');
  });

  it('keeps small valid bodies whole, parsed', async () => {
    sandbox.reset();
    const res = await fetch(`${sandbox.baseUrl}/emails`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${sandbox.apiKey}` },
      body: JSON.stringify({ from: 'a@example.com', to: ['b@example.com'], subject: 'x', text: 'y' }),
    });
    await res.arrayBuffer();
    const [only] = sandbox.requests();
    expect(only.truncated).toBe(false);
    expect(only.json).toMatchObject({ subject: 'x' });
  });
});
