import { inspect } from 'node:util';
import { EmailAbortError, EmailOptionsError, EmailTimeoutError } from '../../lib/index.js';
import { emailApp } from '../support/email-app.js';
import { emailLogJson } from '../support/records.fixture.js';
import { json, startScriptedServer, type ScriptedServer } from '../support/scripted-server.js';

// Attacks the pool with a key that cannot travel in a header, and with failures that happen before a
// request leaves: none may cost a connection slot.

const KEYS: Record<string, string> = {
  'non-ASCII letter': 'sk_live_cl\u00e9_0123456789',
  Cyrillic: 'sk_live_\u043a\u043b\u044e\u0447_0123456789',
  'control character': 'sk_live_\u0001_0123456789',
  DEL: 'sk_live_\u007f_0123456789',
  'zero-width space': 'sk_live_\u200b_0123456789',
  NUL: 'sk_live_\u0000_0123456789',
};

describe('a key that cannot travel in a header (defect 3)', () => {
  let server: ScriptedServer;

  beforeAll(async () => {
    server = await startScriptedServer((_req, res) => json(res, 200, [emailLogJson()]));
  });
  afterAll(() => server.close());

  for (const [name, apiKey] of Object.entries(KEYS)) {
    it(`refuses a key with a ${name} at boot, naming apiKey and quoting nothing`, async () => {
      const err = await emailApp({ apiKey, baseUrl: server.url }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(EmailOptionsError);
      const text = `${String(err)}\n${inspect(err)}`;
      expect(text).toMatch(/apiKey/);
      expect(text).not.toContain('sk_live');
      expect(text).not.toContain('0123456789');
      expect(server.requests).toHaveLength(0);
    });
  }

  it('after more failures before a request leaves than the pool has connections, calls still work', async () => {
    const app = await emailApp({ baseUrl: server.url, connections: 2, maxRetries: 0 });
    try {
      const aborted = AbortSignal.abort();
      for (let i = 0; i < 6; i++) {
        await expect(app.email.get(1, { signal: aborted })).rejects.toBeInstanceOf(EmailAbortError);
        await expect(app.email.get(1, { timeoutMs: Number.MIN_VALUE })).rejects.toBeInstanceOf(
          EmailTimeoutError,
        );
      }
      expect(server.requests).toHaveLength(0);
      const logs = await Promise.all([1, 2, 3, 4].map(() => app.email.list({ timeoutMs: 2_000 })));
      expect(logs).toHaveLength(4);
      expect(server.requests).toHaveLength(4);
    } finally {
      await app.close();
    }
  });
});
