import { EmailUnexpectedResponseError } from '../../lib/index.js';
import { useScriptedEmailApp } from '../support/email-app.js';
import { emailLogJson } from '../support/records.fixture.js';
import { json } from '../support/scripted-server.js';

describe('responses that break the contract', () => {
  // one raw attempt: this spec is about mapping answers to errors, not about delivery
  const app = useScriptedEmailApp({ scope: 'all', maxRetries: 0, reconcile: false, idempotency: 'off' });

  const send = { from: 'app@example.com', to: ['ada@example.com'], subject: 'Hi', text: 'Hello' };

  async function expectUnexpected(
    run: () => Promise<unknown>,
    reason: RegExp,
  ): Promise<EmailUnexpectedResponseError> {
    const err = (await run().catch((e: unknown) => e)) as EmailUnexpectedResponseError;
    expect(err).toBeInstanceOf(EmailUnexpectedResponseError);
    expect(err.message).toMatch(reason);
    return err;
  }

  it('a 2xx body that is not JSON', async () => {
    app.server.handle((_req, res) => {
      res.writeHead(201, { 'content-type': 'text/html' });
      res.end('<html>welcome</html>');
    });
    const err = await expectUnexpected(() => app.email.send(send), /not JSON/);
    expect(err.status).toBe(201);
    expect(err.excerpt).toBe('<html>welcome</html>');
    expect(err.outcome).toBe('uncertain');
  });

  it('an empty 2xx body', async () => {
    app.server.handle((_req, res) => {
      res.writeHead(200);
      res.end();
    });
    await expectUnexpected(() => app.email.list(), /not JSON/);
  });

  const broken: [string, Record<string, unknown>, RegExp][] = [
    ['id missing', { id: undefined }, /body\.id must be an integer \(got nothing\)/],
    ['id a string', { id: '7' }, /body\.id must be an integer/],
    ['toAddresses not an array', { toAddresses: 'a@b.c' }, /body\.toAddresses must be an array of strings/],
    ['toAddresses with a number', { toAddresses: ['a@b.c', 5] }, /body\.toAddresses\[1\] must be a string/],
    ['status null', { status: null }, /body\.status must be a string \(got null\)/],
    ['trackOpens a string', { trackOpens: 'yes' }, /body\.trackOpens must be a boolean/],
    ['createdAt not a date', { createdAt: 'yesterday' }, /body\.createdAt must be a date-time/],
    ['openedAt a number', { openedAt: 5 }, /body\.openedAt must be a date-time/],
    ['providerEmailId a number', { providerEmailId: 5 }, /body\.providerEmailId must be a string or null/],
  ];
  for (const [name, change, reason] of broken) {
    it(`a record with ${name}`, async () => {
      app.server.handle((_req, res) => json(res, 201, emailLogJson(change)));
      await expectUnexpected(() => app.email.send(send), reason);
    });
  }

  it('a list that is not an array, and an array with a broken item', async () => {
    app.server.handle((_req, res) => json(res, 200, { data: [] }));
    await expectUnexpected(() => app.email.list(), /body must be an array/);
    app.server.handle((_req, res) => json(res, 200, [emailLogJson(), emailLogJson({ subject: 3 })]));
    await expectUnexpected(() => app.email.list(), /body\[1\]\.subject must be a string/);
  });

  it('an event of an unknown type, and a detail without its bodies', async () => {
    app.server.handle((_req, res) =>
      json(res, 200, [{ id: 1, type: 'bounce', url: null, occurredAt: '2026-01-01T00:00:00Z' }]),
    );
    await expectUnexpected(() => app.email.listEvents(1), /body\[0\]\.type must be "open" or "click"/);
    app.server.handle((_req, res) => json(res, 200, emailLogJson()));
    await expectUnexpected(() => app.email.get(1), /body\.html must be a string or null/);
  });

  it('a batch answer without data', async () => {
    app.server.handle((_req, res) => json(res, 201, [emailLogJson()]));
    await expectUnexpected(() => app.email.sendBatch([send]), /body must be an object/);
  });

  it('a chunked body over the size cap is refused without buffering it all', async () => {
    app.server.handle((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(1024 * 1024, 'a');
      let sent = 0;
      const pump = (): void => {
        while (sent < 64 && !res.destroyed) {
          sent++;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
    });
    await expectUnexpected(() => app.email.list(), /larger than/);
  }, 90_000); // 32 MiB through loopback and a JS server: seconds alone, near a minute at load 20

  it('a declared content-length over the cap is refused at once', async () => {
    app.server.handle((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(64 * 1024 * 1024) });
      res.write('[');
      req.socket.setTimeout(2000, () => res.destroy());
    });
    await expectUnexpected(() => app.email.list(), /larger than/);
  });
});
