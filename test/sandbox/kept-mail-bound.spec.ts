import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { EmailSandbox } from '../../lib/testing/index.js';

/**
 * Issue 50: a byte bound on the mail the sandbox keeps. Large emails with tracking on (the record's
 * html rewritten, the html as sent kept beside it) are kept only up to `maxKeptBytes` per mailbox, the
 * oldest forgotten first, and the process's heap follows. On the code before the fix every message was
 * kept (both copies of each html) whatever its size: 40 sends of 9.9 MiB grew the process by about 1 GB.
 */
setFlagsFromString('--expose_gc');
const gc = runInNewContext('gc') as () => void;
const MiB = 1024 * 1024;

/** One email of about `mib` MiB of html, with links for the click tracking to rewrite. */
const bigMail = (n: number, mib: number) =>
  JSON.stringify({
    from: 'app@example.com',
    to: ['ada@example.com'],
    subject: `Report ${n}`,
    html: `<p>${n}</p>${'<a href="https://example.com/x">x</a>'.repeat(Math.floor((mib * MiB) / 36))}`,
    trackClicks: true,
    trackOpens: true,
  });

async function send(sandbox: EmailSandbox, body: string): Promise<number> {
  const res = await fetch(`${sandbox.baseUrl}/emails`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${sandbox.apiKey}` },
    body,
  });
  await res.arrayBuffer();
  return res.status;
}

const heapMiB = () => {
  gc();
  return process.memoryUsage().heapUsed / MiB;
};

describe('a byte bound on the mail the sandbox keeps', () => {
  it('keeps at most maxKeptBytes of bodies, the newest; the heap stays near it', async () => {
    const sandbox = await EmailSandbox.start({ maxKeptBytes: 12 * MiB, maxRequestLog: 1 });
    try {
      const before = heapMiB();
      const statuses: number[] = [];
      for (let n = 1; n <= 20; n++) statuses.push(await send(sandbox, bigMail(n, 1)));
      expect(new Set(statuses)).toEqual(new Set([201]));
      const kept = sandbox.sent();
      const bytes = kept.reduce(
        (sum, m) =>
          sum +
          Buffer.byteLength(m.html ?? '') +
          (m.sentHtml === m.html ? 0 : Buffer.byteLength(m.sentHtml ?? '')),
        0,
      );
      expect(bytes).toBeLessThanOrEqual(12 * MiB);
      expect(kept.length).toBeGreaterThan(0);
      expect(kept.length).toBeLessThan(20);
      // The newest are kept, the oldest forgotten (a read of one answers 404).
      expect(kept.at(-1)!.subject).toBe('Report 20');
      const oldest = await fetch(`${sandbox.baseUrl}/emails/1`, {
        headers: { authorization: `Bearer ${sandbox.apiKey}` },
      });
      expect(oldest.status).toBe(404);
      // 20 emails of 1 MiB of html, each kept twice (the rewritten copy is longer): about 70 MB on main.
      expect(heapMiB() - before).toBeLessThan(50);
    } finally {
      await sandbox.close();
    }
  }, 60_000);

  it('counts the html once when tracking did not rewrite it', async () => {
    const sandbox = await EmailSandbox.start({ maxKeptBytes: 9 * MiB });
    try {
      const plain = (n: number) =>
        JSON.stringify({
          from: 'app@example.com',
          to: ['ada@example.com'],
          subject: `P${n}`,
          html: 'x'.repeat(2 * MiB),
        });
      for (let n = 1; n <= 4; n++) expect(await send(sandbox, plain(n))).toBe(201);
      expect(sandbox.sent().map((m) => m.subject)).toEqual(['P1', 'P2', 'P3', 'P4']);
      expect(await send(sandbox, plain(5))).toBe(201);
      expect(sandbox.sent().map((m) => m.subject)).toEqual(['P2', 'P3', 'P4', 'P5']);
    } finally {
      await sandbox.close();
    }
  });

  it('refuses a maxKeptBytes that is not a positive number', async () => {
    const started = EmailSandbox.start({ maxKeptBytes: 0 });
    started.then((s) => s.close()).catch(() => undefined); // never left open, should it start
    await expect(started).rejects.toThrow(/maxKeptBytes must be a positive number/);
  });
});
