import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { EmailModule, EmailOptionsError, EmailService, type EmailModuleOptions } from '../../lib/index.js';
import { TEST_API_KEY } from '../support/email-app.js';
import { emailLogJson } from '../support/records.fixture.js';
import { json, startScriptedServer, type ScriptedServer } from '../support/scripted-server.js';

// Builds its testing modules itself (not with emailApp): the registration forms are what it checks.
let server: ScriptedServer;
beforeAll(async () => {
  server = await startScriptedServer((_req, res) => json(res, 200, [emailLogJson()]));
});
afterAll(() => server.close());

const options = (): EmailModuleOptions => ({ apiKey: TEST_API_KEY, baseUrl: server.url, logger: false });

@Injectable()
class EmailOptionsFactory {
  createEmailOptions(): EmailModuleOptions {
    return options();
  }
}

@Module({ providers: [EmailOptionsFactory], exports: [EmailOptionsFactory] })
class OptionsModule {}

/** A feature module that does not import EmailModule itself. */
@Injectable()
class Consumer {
  constructor(readonly email: EmailService) {}
}
@Module({ providers: [Consumer], exports: [Consumer] })
class FeatureModule {}

async function works(imports: unknown[]): Promise<void> {
  const moduleRef = await Test.createTestingModule({ imports: imports as never[] }).compile();
  await moduleRef.init();
  try {
    const before = server.requests.length;
    const list = await moduleRef.get(EmailService).list({ limit: 1 });
    expect(list[0].id).toBe(1);
    expect(server.requests.length).toBe(before + 1);
    expect(server.requests.at(-1)?.headers.authorization).toBe(`Bearer ${TEST_API_KEY}`);
  } finally {
    await moduleRef.close();
  }
}

describe('EmailModule registration', () => {
  it('forRoot', () => works([EmailModule.forRoot(options())]));

  it('forRootAsync with useFactory, imports and inject', () =>
    works([
      EmailModule.forRootAsync({
        imports: [OptionsModule],
        inject: [EmailOptionsFactory],
        useFactory: (f: EmailOptionsFactory) => f.createEmailOptions(),
      }),
    ]));

  it('forRootAsync with an async useFactory', () =>
    works([EmailModule.forRootAsync({ useFactory: async () => options() })]));

  it('forRootAsync with useClass', () =>
    works([EmailModule.forRootAsync({ useClass: EmailOptionsFactory })]));

  it('forRootAsync with useExisting', () =>
    works([EmailModule.forRootAsync({ imports: [OptionsModule], useExisting: EmailOptionsFactory })]));

  for (const form of ['forRoot', 'forRootAsync'] as const) {
    it(`${form} with isGlobal: true is visible to modules that do not import it`, async () => {
      const dynamic =
        form === 'forRoot'
          ? EmailModule.forRoot({ ...options(), isGlobal: true })
          : EmailModule.forRootAsync({ useFactory: options, isGlobal: true });
      const moduleRef = await Test.createTestingModule({ imports: [dynamic, FeatureModule] }).compile();
      try {
        const consumer = moduleRef.get(Consumer);
        expect(consumer.email).toBeInstanceOf(EmailService);
        await expect(consumer.email.list()).resolves.toHaveLength(1);
      } finally {
        await moduleRef.close();
      }
    });

    it(`${form} without isGlobal is not visible to modules that do not import it`, async () => {
      const dynamic =
        form === 'forRoot'
          ? EmailModule.forRoot(options())
          : EmailModule.forRootAsync({ useFactory: options });
      await expect(Test.createTestingModule({ imports: [dynamic, FeatureModule] }).compile()).rejects.toThrow(
        /EmailService/,
      );
    });
  }

  it('the isGlobal extra is not passed on as an option (unknown options are refused at boot)', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [EmailModule.forRoot({ ...options(), isGlobal: false })],
    }).compile();
    expect(moduleRef.get(EmailService)).toBeInstanceOf(EmailService);
    await moduleRef.close();
  });
});

describe('options are checked at boot', () => {
  async function bootError(opts: Record<string, unknown>): Promise<EmailOptionsError> {
    const err = await Test.createTestingModule({
      imports: [EmailModule.forRootAsync({ useFactory: () => opts as unknown as EmailModuleOptions })],
    })
      .compile()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EmailOptionsError);
    return err as EmailOptionsError;
  }

  it('names every bad option in one error', async () => {
    const err = await bootError({
      baseUrl: 'not a url',
      timeoutMs: 0,
      connectTimeoutMs: -5,
      maxRetries: -1,
      connections: 1.5,
      idempotency: 'sometimes',
      reconcile: 'yes',
      defaultFrom: '',
      allowInsecureHttp: 'no',
      logger: 42,
      dispatcher: {},
      timeout: 100,
    });
    const text = err.message;
    for (const name of [
      'apiKey is required',
      'baseUrl must be an absolute URL',
      'timeoutMs must be a positive number',
      'connectTimeoutMs must be a positive number',
      'maxRetries must be an integer of 0 or more',
      'connections must be a positive integer',
      "idempotency must be 'auto' or 'off'",
      'reconcile must be a boolean',
      'defaultFrom must be a non-empty string',
      'allowInsecureHttp must be a boolean',
      'logger must be a Nest LoggerService or false',
      'dispatcher must be an undici Dispatcher',
      'unknown option "timeout"',
    ]) {
      expect(text).toContain(name);
    }
    expect(err.problems).toHaveLength(13);
  });

  it('refuses plain http to a non-loopback host unless allowed', async () => {
    const err = await bootError({ apiKey: TEST_API_KEY, baseUrl: 'http://mail.example.com' });
    expect(err.message).toMatch(/plain http to a host that is not loopback/);
    expect(err.message).not.toContain('mail.example.com');
    expect(err.message).not.toContain(TEST_API_KEY);
    const ok = await Test.createTestingModule({
      imports: [
        EmailModule.forRoot({
          apiKey: TEST_API_KEY,
          baseUrl: 'http://mail.example.com',
          allowInsecureHttp: true,
        }),
      ],
    }).compile();
    await ok.close();
  });

  it('accepts loopback http hosts, and rejects other schemes, credentials and queries', async () => {
    for (const baseUrl of ['http://localhost:1', 'http://127.0.0.5:1/api', 'http://[::1]:1']) {
      const ok = await Test.createTestingModule({
        imports: [EmailModule.forRoot({ apiKey: TEST_API_KEY, baseUrl })],
      }).compile();
      await ok.close();
    }
    expect((await bootError({ apiKey: 'k', baseUrl: 'ftp://x.example.com' })).message).toMatch(
      /http: or https:/,
    );
    expect((await bootError({ apiKey: 'k', baseUrl: 'https://u:p@x.example.com' })).message).toMatch(
      /credentials/,
    );
    expect((await bootError({ apiKey: 'k', baseUrl: 'https://x.example.com/?a=1' })).message).toMatch(
      /query/,
    );
  });

  it('refuses an apiKey with whitespace, without echoing it', async () => {
    const err = await bootError({ apiKey: 'sk_live_abc def', baseUrl: 'https://x.example.com' });
    expect(err.message).toMatch(/apiKey must not contain whitespace/);
    expect(err.message).not.toContain('sk_live_abc');
  });

  it("refuses an apiKey given as 'Bearer <key>' with a hint, without echoing the key", async () => {
    const err = await bootError({ apiKey: 'Bearer sk_live_abcdef123', baseUrl: 'https://x.example.com' });
    expect(err.message).toMatch(/apiKey must be the key alone, without the 'Bearer ' prefix/);
    expect(err.message).not.toMatch(/whitespace/);
    expect(err.message).not.toContain('sk_live_abc');
  });
});
