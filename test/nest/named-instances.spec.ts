import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  EmailForbiddenError,
  EmailHealthIndicator,
  EmailModule,
  EmailService,
  InjectEmailService,
  createEmailConfig,
  getEmailServiceToken,
} from '../../lib/index.js';
import { getEmailHealthIndicatorToken } from '../../lib/email.module-definition.js';
import { useSandbox } from '../support/sandbox.js';

const KEY_A = 'sk_test_transactional_aaaaaaaaaaaa';
const KEY_B = 'sk_test_marketing_bbbbbbbbbbbbbbbb';

@Injectable()
class Mailer {
  constructor(
    readonly email: EmailService,
    @InjectEmailService('marketing') readonly marketing: EmailService,
  ) {}
}

// Own testing modules (not emailApp): several named instances, forRootAsync and feature modules.
describe('several named EmailModule instances in one application', () => {
  const sandbox = useSandbox({
    keys: [
      { key: KEY_A, account: 'shop', domains: ['shop.test'] },
      { key: KEY_B, account: 'news', domains: ['news.test'] },
    ],
  });

  const instance = (apiKey: string, defaultFrom: string, name?: string) =>
    EmailModule.forRoot({
      apiKey,
      baseUrl: sandbox.baseUrl,
      defaultFrom,
      logger: false,
      maxRetries: 0,
      name,
    });

  it('send through different keys; the default instance is unchanged', async () => {
    @Module({
      imports: [instance(KEY_A, 'orders@shop.test'), instance(KEY_B, 'hello@news.test', 'marketing')],
      providers: [Mailer],
    })
    class AppModule {}
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    try {
      const { email, marketing } = moduleRef.get(Mailer);
      expect(email).not.toBe(marketing);
      expect(moduleRef.get(getEmailServiceToken('marketing'), { strict: false })).toBe(marketing);
      expect(getEmailServiceToken()).toBe(EmailService);

      const order = await email.send({ to: ['ada@example.com'], subject: 'Order 1', text: 'Thanks' });
      const news = await marketing.send({ to: ['ada@example.com'], subject: 'News 1', text: 'Hello' });
      expect(order.fromAddress).toBe('orders@shop.test');
      expect(news.fromAddress).toBe('hello@news.test');
      // each key sees its own account's log only
      expect((await email.list()).map((m) => m.subject)).toEqual(['Order 1']);
      expect((await marketing.list()).map((m) => m.subject)).toEqual(['News 1']);
      // and each key may send only from its own domain
      await expect(
        email.send({ from: 'hello@news.test', to: ['ada@example.com'], subject: 'x', text: 'y' }),
      ).rejects.toBeInstanceOf(EmailForbiddenError);

      const health = moduleRef.get<EmailHealthIndicator>(getEmailHealthIndicatorToken('marketing'), {
        strict: false,
      });
      expect((await health.isHealthy('marketing')).marketing.status).toBe('up');
    } finally {
      await moduleRef.close();
    }
  });

  it('a named instance does not provide the EmailService class, so it cannot shadow the default one', async () => {
    @Injectable()
    class NeedsDefault {
      constructor(readonly email: EmailService) {}
    }
    await expect(
      Test.createTestingModule({
        imports: [instance(KEY_B, 'hello@news.test', 'marketing')],
        providers: [NeedsDefault],
      }).compile(),
    ).rejects.toThrow(/EmailService/);
  });

  it('works with forRootAsync, isGlobal and a prefixed config namespace', async () => {
    const saved = { ...process.env };
    Object.assign(process.env, { NEWS_EMAIL_API_KEY: KEY_B, NEWS_EMAIL_BASE_URL: sandbox.baseUrl });
    const newsConfig = createEmailConfig({ namespace: 'newsEmail', prefix: 'NEWS_EMAIL_' });
    @Injectable()
    class Consumer {
      constructor(@InjectEmailService('news') readonly news: EmailService) {}
    }
    @Module({ providers: [Consumer] })
    class FeatureModule {}
    try {
      const moduleRef = await Test.createTestingModule({
        imports: [
          EmailModule.forRootAsync({ ...newsConfig.asProvider(), name: 'news', isGlobal: true }),
          FeatureModule,
        ],
      }).compile();
      try {
        const sent = await moduleRef
          .get(Consumer)
          .news.send({ from: 'hi@news.test', to: ['bo@example.com'], subject: 'Async', text: 'ok' });
        expect(sent.subject).toBe('Async');
      } finally {
        await moduleRef.close();
      }
    } finally {
      for (const name of ['NEWS_EMAIL_API_KEY', 'NEWS_EMAIL_BASE_URL']) delete process.env[name];
      Object.assign(process.env, saved);
    }
  });

  it('refuses an empty name', () => {
    expect(() => EmailModule.forRoot({ apiKey: KEY_A, baseUrl: sandbox.baseUrl, name: ' ' })).toThrow(
      /instance name must be a non-empty string/,
    );
  });
});
