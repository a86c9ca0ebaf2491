import { ConsoleLogger, Logger } from '@nestjs/common';
import { EmailSendUncertainError } from '../../lib/index.js';
import { emailApp, TEST_API_KEY } from '../support/email-app.js';
import { startScriptedServer, type ScriptedServer } from '../support/scripted-server.js';
import { CapturingLogger } from '../support/capturing.logger.js';
import { failure, input, script } from './delivery.support.js';

describe('attempt logging', () => {
  let server: ScriptedServer;
  beforeEach(async () => {
    server = await startScriptedServer();
  });
  afterEach(() => server.close());

  it('one debug line per send, naming its failed attempts; none for a read that succeeded at once; no secret, no body', async () => {
    const logger = new CapturingLogger();
    const { email, close } = await emailApp({ baseUrl: server.url, logger, maxRetries: 2 });
    try {
      script(server, [503, 201]);
      await email.send({ ...input, text: 'secret body text' }, { idempotencyKey: 'order-1:confirmation' });
      expect(logger.entries).toEqual([
        {
          level: 'debug',
          message: expect.stringMatching(
            /^POST \/emails -> ok after 503 \(retry in \d+ ms\) key=order-1:confirmation$/,
          ),
        },
      ]);

      logger.entries = [];
      script(server, [201]);
      await email.send(input, { idempotencyKey: 'order-2:confirmation' });
      await email.list({ limit: 1 });
      expect(logger.entries).toEqual([
        { level: 'debug', message: 'POST /emails -> ok key=order-2:confirmation' },
      ]);

      const all = logger.messages.join('\n');
      for (const secret of [
        TEST_API_KEY,
        'secret body text',
        'ada@example.com',
        'App@Example.com',
        'Order 1',
      ]) {
        expect(all).not.toContain(secret);
      }
    } finally {
      await close();
    }
  });

  it('an uncertain send: one warning with every attempt and look-up and the key, nothing at debug', async () => {
    const logger = new CapturingLogger();
    const { email, close } = await emailApp({ baseUrl: server.url, logger, maxRetries: 1 });
    try {
      script(server, ['reset']);
      const err = await failure(email.send(input));
      expect(err).toBeInstanceOf(EmailSendUncertainError);
      const key = (err as EmailSendUncertainError).idempotencyKey;
      const own = logger.entries.filter((e) => e.message.startsWith('POST /emails'));
      expect(own).toEqual([
        {
          level: 'warn',
          message: expect.stringMatching(
            new RegExp(
              `^POST /emails outcome unknown after 2 attempts: \\w+ \\(retry in \\d+ ms\\), \\w+ \\(no retry\\), ` +
                `look-up: not found; send again only with the same key key=${key}$`,
            ),
          ),
        },
      ]);
      expect(logger.entries.filter((e) => e.level === 'debug')).toEqual([]);
    } finally {
      await close();
    }
  });

  it.each([
    ['false writes nothing', false as const, 0],
    ["left out goes to Nest's Logger", undefined, 1],
  ])('logger %s', async (_name, option, lines) => {
    const { email, close } = await emailApp({ baseUrl: server.url, logger: option, reconcile: false });
    const global = new CapturingLogger();
    Logger.overrideLogger(global); // where Nest's Logger writes (after compile: the testing module sets its own)
    try {
      script(server, [500, 201]);
      expect((await email.send(input)).id).toBe(100);
      expect(global.messages.filter((l) => l.startsWith('POST /emails -> ok after 500'))).toHaveLength(lines);
    } finally {
      Logger.overrideLogger(new ConsoleLogger());
      await close();
    }
  });
  it('a logger that throws changes nothing: the send returns its record, one request, telemetry off', async () => {
    const logger = new CapturingLogger();
    logger.debug = () => {
      throw new Error('log sink down');
    };
    const { email, close } = await emailApp({ baseUrl: server.url, logger, telemetry: false });
    try {
      script(server, [201]);
      await expect(email.send(input, { idempotencyKey: 'order-2:confirmation' })).resolves.toMatchObject({
        id: expect.any(Number),
      });
      expect(server.requests).toHaveLength(1);
    } finally {
      await close();
    }
  });
});
