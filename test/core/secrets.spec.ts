import { inspect } from 'node:util';
import { EmailError } from '../../lib/index.js';
import { EmailResolvedOptions } from '../../lib/config/email.options.js';
import { EmailAccounts } from '../../lib/delivery/email-accounts.store.js';
import { emailApp, TEST_API_KEY } from '../support/email-app.js';
import { emailLogJson } from '../support/records.fixture.js';
import { CapturingLogger } from '../support/capturing.logger.js';
import { json, startScriptedServer, type ScriptedServer } from '../support/scripted-server.js';

const send = { from: 'app@example.com', to: ['ada@example.com'], subject: 'Hi', text: 'Hello' };

describe('the API key never shows', () => {
  let server: ScriptedServer;
  const logger = new CapturingLogger();
  beforeAll(async () => {
    server = await startScriptedServer();
  });
  afterAll(() => server.close());

  function expectNoKey(text: string): void {
    expect(text).not.toContain(TEST_API_KEY);
    expect(text).not.toContain(TEST_API_KEY.slice(8)); // not even a large part of it
  }

  function expectCleanError(err: unknown): void {
    expect(err).toBeInstanceOf(EmailError);
    const e = err as EmailError;
    expectNoKey(e.message);
    expectNoKey(String(e.stack));
    expectNoKey(JSON.stringify(e));
    expectNoKey(JSON.stringify(e.toJSON()));
    expectNoKey(inspect(e, { depth: 10, showHidden: true }));
  }

  it('in errors of every kind, even when the server echoes the key', async () => {
    // the calls meant to time out give their own short timeoutMs; the others must not on a loaded machine
    const { email, moduleRef, close } = await emailApp({ baseUrl: server.url, logger, timeoutMs: 20_000 });
    try {
      const echo = (status: number) => (req: { headers: Record<string, unknown> }, res: never) =>
        json(res, status, { error: `bad token ${String(req.headers.authorization)}` });
      for (const status of [400, 401, 403, 404, 409, 429]) {
        server.handle(echo(status) as never);
        const err = await email.send(send, { maxRetries: 0 }).catch((e: unknown) => e);
        expectCleanError(err);
        expect((err as Error).message).toContain('[redacted]');
      }
      server.handle((req, res) => json(res, 201, { weird: req.headers.authorization }));
      expectCleanError(await email.send(send, { maxRetries: 0 }).catch((e: unknown) => e));
      server.handle((req, res) => {
        res.writeHead(200);
        res.end(`not json ${String(req.headers.authorization)}`);
      });
      expectCleanError(await email.list({ maxRetries: 0 }).catch((e: unknown) => e));
      server.handle(() => undefined);
      expectCleanError(await email.list({ timeoutMs: 100, maxRetries: 0 }).catch((e: unknown) => e));
      server.handle((req) => void req.socket.destroy());
      expectCleanError(await email.list({ maxRetries: 0 }).catch((e: unknown) => e));
      expectCleanError(await email.send({ ...send, to: 'x' as never }).catch((e: unknown) => e));
      expectCleanError(await email.send(send, { signal: AbortSignal.abort() }).catch((e: unknown) => e));

      server.handle((_req, res) => json(res, 200, [emailLogJson()]));
      await email.list();
      for (const thing of [email, moduleRef.get(EmailAccounts), moduleRef.get(EmailResolvedOptions)]) {
        expectNoKey(inspect(thing, { depth: 10, showHidden: true }));
        expectNoKey(JSON.stringify(thing));
      }
    } finally {
      await close();
    }
    expectNoKey(logger.lines.join('\n'));
  });

  it('in the boot error for bad options', async () => {
    const err = await emailApp({ baseUrl: 'http://mail.example.com', timeoutMs: -1 }).catch(
      (e: unknown) => e,
    );
    expectCleanError(err);
  });
});
