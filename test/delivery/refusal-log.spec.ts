import { EmailBadRequestError, EmailForbiddenError, type EmailService } from '../../lib/index.js';
import { emailErrorToHttpException } from '../../lib/interceptors/email-error.helpers.js';
import { emailApp, TEST_API_KEY } from '../support/email-app.js';
import { json, startScriptedServer, type ScriptedServer } from '../support/scripted-server.js';
import { CapturingLogger } from '../support/capturing.logger.js';
import { useSandbox } from '../support/sandbox.js';

/**
 * A call the service refuses with a 4xx: its reason (the `{error}` text, redacted) is logged once at
 * warn by the delivery observer and kept on the error, while the interceptor's answer stays generic.
 * Through the sandbox: its template 1 is `Welcome, {{name}}` and refuses any other variable.
 */
describe('a refused call logs the service reason once', () => {
  const sandbox = useSandbox();
  let email: EmailService;
  let close: () => Promise<void>;
  const logger = new CapturingLogger();

  beforeAll(async () => {
    ({ email, close } = await emailApp({ baseUrl: sandbox.baseUrl, apiKey: sandbox.apiKey, logger }));
  });
  afterAll(async () => {
    await close?.();
  });
  beforeEach(() => {
    logger.messages = [];
    logger.entries = [];
  });

  it('a template send with an unknown variable: the reason at warn, once; on the error; not in the answer', async () => {
    const err = await email
      .send(
        {
          from: 'hello@example.com',
          to: ['ada@example.com'],
          templateId: 1,
          variables: { name: 'Ada', coupon: 'X1' },
        },
        { idempotencyKey: 'welcome:ada:coupon-test' },
      )
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(EmailBadRequestError);
    const refused = err as EmailBadRequestError;
    expect(refused.apiMessage).toMatch(/variables\.coupon is not used by the template/);
    expect(refused.message).toContain(refused.apiMessage);

    const warnings = logger.entries.filter((e) => e.level === 'warn');
    expect(warnings).toEqual([
      {
        level: 'warn',
        message: `POST /emails refused with 400: ${refused.apiMessage} key=welcome:ada:coupon-test`,
      },
    ]);
    expect(logger.messages.filter((m) => m.includes('is not used by the template'))).toHaveLength(1);

    const answer = JSON.stringify(emailErrorToHttpException(refused)?.getResponse());
    expect(answer).toContain('400');
    expect(answer).not.toContain('coupon');
    expect(sandbox.messages()).toHaveLength(0);
  });

  it('a 403 for an unverified sender: the reason at warn too', async () => {
    const err = (await email
      .send({ from: 'x@unverified.test', to: ['ada@example.com'], subject: 'Hi', text: 'x' })
      .catch((e: unknown) => e)) as EmailForbiddenError;
    expect(err).toBeInstanceOf(EmailForbiddenError);
    const warnings = logger.entries.filter((e) => e.level === 'warn').map((e) => e.message);
    expect(warnings).toHaveLength(1);
    expect(warnings[0].startsWith(`POST /emails refused with 403: ${err.apiMessage} key=`)).toBe(true);
  });

  it('a call that succeeds writes no warning', async () => {
    await email.send({ from: 'hello@example.com', to: ['ada@example.com'], subject: 'Hi', text: 'x' });
    expect(logger.entries.filter((e) => e.level === 'warn')).toEqual([]);
  });
});

describe('the logged reason is redacted', () => {
  let server: ScriptedServer;
  beforeAll(async () => {
    server = await startScriptedServer((_req, res) =>
      json(res, 401, { error: `key ${TEST_API_KEY} was revoked` }),
    );
  });
  afterAll(() => server.close());

  it('a service that echoes the API key: the warning carries [redacted], never the key', async () => {
    const logger = new CapturingLogger();
    const { email, close } = await emailApp({ baseUrl: server.url, logger });
    try {
      await expect(email.list()).rejects.toThrow(/401/);
      const warnings = logger.entries.filter((e) => e.level === 'warn').map((e) => e.message);
      expect(warnings).toEqual(['GET /emails refused with 401: key [redacted] was revoked']);
      expect(logger.lines.join('\n')).not.toContain(TEST_API_KEY);
    } finally {
      await close();
    }
  });
});
