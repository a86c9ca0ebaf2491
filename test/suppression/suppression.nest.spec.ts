import { inspect } from 'node:util';
import { Body, Controller, Module, Post } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { TerminusModule } from '@nestjs/terminus';
import { EmailResolvedOptions } from '../../lib/config/email.options.js';
import { EMAIL_MODULE_OPTIONS } from '../../lib/email.module-definition.js';
import {
  EmailErrorInterceptor,
  EmailOptionsError,
  EmailHealthIndicator,
  EmailModule,
  EmailService,
  EmailSuppressions,
  type EmailInput,
} from '../../lib/index.js';
import { attributeTexts, registerMemoryOtel, type MemoryOtel } from '../telemetry/otel.support.js';
import { ADAPTERS, postJson, startHttpApp } from '../nest/http-app.helper.js';
import { CapturingLogger } from '../support/capturing.logger.js';
import { emailApp } from '../support/email-app.js';
import { startRedis, type TestRedis } from '../support/redis-server.mjs';
import { useSandbox } from '../support/sandbox.js';

// How the gate fits a Nest app: its error through EmailErrorInterceptor (422, no address in the answer),
// the Terminus indicator reporting the store, telemetry counting refusals by reason, and no address in
// spans, metrics or the module's log lines.

const sandbox = useSandbox({ reset: true });
const mail = (to: string[]): EmailInput => ({ from: 'shop@example.com', to, subject: 'Hi', text: 'Hello' });

describe.each(ADAPTERS)('EmailSuppressedError through EmailErrorInterceptor (%s)', (adapter) => {
  it('answers 422, not-sent, counting the refused recipients and naming none', async () => {
    @Controller('mail')
    class MailController {
      constructor(private readonly email: EmailService) {}
      @Post() send(@Body() body: EmailInput) {
        return this.email.send(body);
      }
    }
    @Module({
      imports: [EmailModule.forRoot({ apiKey: sandbox.apiKey, baseUrl: sandbox.baseUrl, logger: false })],
      controllers: [MailController],
      providers: [{ provide: APP_INTERCEPTOR, useClass: EmailErrorInterceptor }],
    })
    class AppModule {}
    const http = await startHttpApp(AppModule, adapter);
    try {
      await http.app
        .get(EmailSuppressions)
        .add(['gone@example.com', 'spam@example.com'], { reason: 'bounced' });
      const answer = await http.request(
        '/mail',
        postJson(mail(['gone@example.com', 'spam@example.com', 'ok@example.com'])),
      );
      expect(answer.status).toBe(422);
      expect(answer.body).toEqual({
        statusCode: 422,
        error: 'Unprocessable Content',
        message: expect.stringContaining('suppression list'),
        outcome: 'not-sent',
        suppressed: 2,
      });
      expect(answer.text).not.toMatch(/gone@|spam@/);
      expect(sandbox.requests()).toHaveLength(0);
    } finally {
      await http.close();
    }
  });
});

describe('the Terminus indicator reports the store', () => {
  let redis: TestRedis;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(() => redis?.stop());

  it('up with the list while Redis answers, down (suppression-store) while it does not', async () => {
    const { moduleRef, close } = await emailApp({
      sandbox,
      suppression: { redis: redis.url, prefix: `health-${process.pid}`, commandTimeoutMs: 300 },
      imports: [TerminusModule],
    });
    try {
      await moduleRef.get(EmailSuppressions).add('x@example.com', { reason: 'manual' });
      const health = moduleRef.get(EmailHealthIndicator);
      expect(await health.isHealthy()).toEqual({
        email: {
          status: 'up',
          latencyMs: expect.any(Number),
          suppression: { store: 'redis', status: 'up', entries: 1, current: true, pendingWrites: 0 },
        },
      });
      redis.pause();
      try {
        expect(await health.isHealthy()).toMatchObject({
          email: {
            status: 'down',
            reason: 'suppression-store',
            suppression: { store: 'redis', status: 'down' },
          },
        });
      } finally {
        redis.resume();
      }
    } finally {
      await close();
    }
  });
});

describe('telemetry and logs', () => {
  let otel: MemoryOtel;
  beforeAll(() => {
    otel = registerMemoryOtel();
  });
  afterAll(() => otel.shutdown());

  it('counts refusals by reason, and no span, metric or log line names an address', async () => {
    const logger = new CapturingLogger();
    const { email, moduleRef, close } = await emailApp({ sandbox, logger });
    try {
      const suppressions = moduleRef.get(EmailSuppressions);
      await suppressions.add('gone@example.com', { reason: 'bounced' });
      await suppressions.add(['spam1@example.com', 'spam2@example.com'], { reason: 'complained' });
      sandbox.bounce('learned@example.com');
      const { id } = await email.send(mail(['learned@example.com']));
      await email.get(id);
      await expect(email.send(mail(['gone@example.com']))).rejects.toThrow();
      await expect(
        email.sendBatch([mail(['spam1@example.com', 'spam2@example.com']), mail(['ok@example.com'])]),
      ).rejects.toThrow();
      await email.sendMany([mail(['spam1@example.com']), mail(['ok2@example.com'])]);
      const points = await otel.points('email.client.suppressed_recipients');
      const counted = Object.fromEntries(
        points.map((p) => [
          `${p.attributes['email.operation']} ${p.attributes['email.suppression.reason']}`,
          p.value,
        ]),
      );
      expect(counted).toEqual({ 'send bounced': 1, 'sendBatch complained': 2, 'sendMany complained': 1 });
      const texts = [
        ...otel.spans().flatMap(attributeTexts),
        ...otel.spans().map((s) => s.name),
        ...points.flatMap((p) => Object.values(p.attributes).map(String)),
        ...logger.lines,
      ].join('\n');
      expect(logger.lines.some((l) => l.includes('refused by the suppression list'))).toBe(true);
      expect(texts).not.toMatch(/gone@|spam\d@|learned@|ok2?@/);
    } finally {
      await close();
    }
  });
});

describe('the hashAddresses secret', () => {
  const SECRET = 'hash-secret-never-shown-0123456789';

  it('shows in no inspect output or JSON of the module, its options, the gate or the service', async () => {
    const { moduleRef, email, close } = await emailApp({
      sandbox,
      suppression: { hashAddresses: { secret: SECRET } },
    });
    try {
      await moduleRef.get(EmailSuppressions).add('x@example.com', { reason: 'manual' });
      const things = [
        moduleRef.get(EMAIL_MODULE_OPTIONS),
        moduleRef.get(EmailResolvedOptions),
        moduleRef.get(EmailSuppressions).gate,
        moduleRef.get(EmailSuppressions),
        email,
      ];
      for (const thing of things) {
        for (const mode of [{}, { showHidden: true, customInspect: false, getters: true }])
          expect(inspect(thing, { depth: 12, ...mode })).not.toContain(SECRET);
        expect(JSON.stringify(thing) ?? '').not.toContain(SECRET);
      }
    } finally {
      await close();
    }
  });

  it('a secret too short is refused at boot, without showing it', async () => {
    const err = await emailApp({ sandbox, suppression: { hashAddresses: { secret: 'short-secret' } } }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(EmailOptionsError);
    expect(String((err as Error).message)).toContain('suppression.hashAddresses.secret');
    expect(inspect(err, { depth: 10, showHidden: true })).not.toContain('short-secret');
  });
});
