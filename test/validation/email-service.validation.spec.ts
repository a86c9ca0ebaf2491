import { EmailValidationError } from '../../lib/index.js';
import { useScriptedEmailApp } from '../support/email-app.js';
import { emailLogJson } from '../support/records.fixture.js';
import { json } from '../support/scripted-server.js';
import { batchCases, singleCases } from './email-rules.cases.js';
import { batch, inline } from './email-fixtures.js';

describe('EmailService validates before any request', () => {
  const app = useScriptedEmailApp({
    scope: 'all',
    handler: (req, res) =>
      json(res, 201, req.url === '/emails/batch' ? { data: [emailLogJson()] } : emailLogJson()),
    maxRetries: 0,
  });

  beforeEach(() => {
    app.server.requests.length = 0;
  });

  // Cases measured against the fixed test clock are left out: the service reads the real one.
  const badSingles = singleCases.filter((c) => !c.ok && !c.clock);
  const badBatches = batchCases.filter((c) => !c.ok);

  it.each(badSingles.map((c) => [c.rule, c] as const))(
    'send refuses %s; the server gets nothing',
    async (_r, c) => {
      const error = await app.email.send(c.input as never).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(EmailValidationError);
      expect((error as EmailValidationError).outcome).toBe('not-sent');
      expect((error as EmailValidationError).issues.map((i) => i.path)).toContain(c.path);
      expect(app.server.requests).toHaveLength(0);
    },
  );

  it.each(badBatches.map((c) => [c.rule, c] as const))(
    'sendBatch refuses %s; the server gets nothing',
    async (_r, c) => {
      const error = await app.email.sendBatch(c.input as never).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(EmailValidationError);
      expect((error as EmailValidationError).issues.map((i) => i.path)).toContain(c.path);
      expect(app.server.requests).toHaveLength(0);
    },
  );

  it('lists every issue in the error, and its message names each field', async () => {
    const error = (await app.email
      .send({ ...inline({ cc: ['a@example.com'], subject: '' }), to: ['bad'] })
      .catch((e: unknown) => e)) as EmailValidationError;
    expect(error.issues.map((i) => i.path).sort()).toEqual(['cc', 'subject', 'to[0]']);
    expect(error.message).toMatch(/cc is not supported/);
    expect(error.message).toMatch(/to\[0\] is not a valid email address/);
    expect(app.server.requests).toHaveLength(0);
  });

  it('a revoked Proxy in the input is an EmailValidationError naming where it is, never a TypeError', async () => {
    const { proxy, revoke } = Proxy.revocable(['ada@example.com'], {});
    revoke();
    const sent = (await app.email
      .send(inline({ to: proxy }))
      .catch((e: unknown) => e)) as EmailValidationError;
    expect(sent).toBeInstanceOf(EmailValidationError);
    expect(sent.issues).toEqual([{ path: 'to', message: 'cannot be read (a revoked Proxy?)' }]);
    const batched = (await app.email.sendBatch([inline(), proxy] as never).catch((e: unknown) => e)) as Error;
    expect(batched).toBeInstanceOf(EmailValidationError);
    expect(app.server.requests).toHaveLength(0);
  });

  it('does send valid input (the server is reachable, so the zero counts above mean something)', async () => {
    await app.email.send(inline());
    await app.email.sendBatch(batch(1));
    expect(app.server.requests.map((r) => r.url)).toEqual(['/emails', '/emails/batch']);
  });
});
