import type { LookupFunction } from 'node:net';
import { Agent } from 'undici';
import { CapturingLogger } from '../support/capturing.logger.js';
import { emailApp, TEST_API_KEY } from '../support/email-app.js';
import { emailLogJson } from '../support/records.fixture.js';
import { json, startScriptedServer, type ScriptedServer } from '../support/scripted-server.js';

// Attacks the quiet opt-out: plain http to a host that is not loopback, allowed with
// allowInsecureHttp: true, must be said once at boot (the key travels in clear text).

/** Resolves every host name to 127.0.0.1, so that a "remote" host name reaches the local server. */
const toLoopback: LookupFunction = (_host, options, callback) => {
  const cb = callback as (err: null, address: unknown, family?: number) => void;
  if ((options as { all?: boolean }).all) cb(null, [{ address: '127.0.0.1', family: 4 }]);
  else cb(null, '127.0.0.1', 4);
};

describe('plain http to a remote host warns once at boot (defect 5)', () => {
  let server: ScriptedServer;
  const agent = new Agent({ connect: { lookup: toLoopback } });

  beforeAll(async () => {
    server = await startScriptedServer((_req, res) => json(res, 200, [emailLogJson()]));
  });
  afterAll(async () => {
    await agent.close();
    await server.close();
  });

  it('warns once, naming the risk and not the key, then works', async () => {
    const logger = new CapturingLogger();
    const app = await emailApp({
      baseUrl: `http://mail.internal.example:${server.port}`,
      allowInsecureHttp: true,
      dispatcher: agent,
      logger,
    });
    try {
      await app.email.list();
      await app.email.list();
      expect(server.requests).toHaveLength(2);
      expect(server.requests[0].headers.host).toBe(`mail.internal.example:${server.port}`);
      const warnings = logger.entries
        .filter((e) => e.level === 'warn' && /plain http/.test(e.message))
        .map((e) => e.message);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/unencrypted/);
      expect(logger.lines.join('\n')).not.toContain(TEST_API_KEY);
    } finally {
      await app.close();
    }
  });

  it('says nothing for loopback http', async () => {
    const logger = new CapturingLogger();
    const app = await emailApp({ baseUrl: server.url, logger });
    try {
      await app.email.list();
      expect(logger.lines.filter((l) => /plain http/.test(l))).toEqual([]);
    } finally {
      await app.close();
    }
  });
});
