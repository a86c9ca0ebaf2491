import { inspect } from 'node:util';
import { ConfigModule, ConfigService, type ConfigType } from '@nestjs/config';
import { Test } from '@nestjs/testing';
import { Injectable } from '@nestjs/common';
import {
  EmailModule,
  EmailOptionsError,
  EmailService,
  createEmailConfig,
  emailConfig,
  parseEmailEnv,
  type EmailConfigFactory,
} from '../../lib/index.js';
import { EmailEnvError } from '../../lib/errors/email-env.error.js';
import { isMissingModule } from '../../lib/peers/optional-peer.loader.js';
import { useSandbox } from '../support/sandbox.js';

const SECRET = 'sk_live_0123456789abcdef_SECRET';

function envError(env: Record<string, string>, prefix?: string): EmailEnvError {
  try {
    parseEmailEnv(env, { prefix });
  } catch (err) {
    expect(err).toBeInstanceOf(EmailEnvError);
    return err as EmailEnvError;
  }
  throw new Error('expected an EmailEnvError');
}

describe('parseEmailEnv', () => {
  it('reads every variable into options', () => {
    expect(
      parseEmailEnv({
        EMAIL_API_KEY: SECRET,
        EMAIL_BASE_URL: ' https://mail.example.com/api ',
        EMAIL_TIMEOUT_MS: '15000',
        EMAIL_CONNECT_TIMEOUT_MS: '2000',
        EMAIL_MAX_RETRIES: '0',
        EMAIL_DEFAULT_FROM: 'Shop <shop@example.com>',
        EMAIL_IDEMPOTENCY: 'OFF',
        EMAIL_RECONCILE: 'false',
        EMAIL_CONNECTIONS: '4',
        EMAIL_ALLOW_INSECURE_HTTP: 'true',
        UNRELATED: 'x',
      }),
    ).toEqual({
      apiKey: SECRET,
      baseUrl: 'https://mail.example.com/api',
      timeoutMs: 15000,
      connectTimeoutMs: 2000,
      maxRetries: 0,
      defaultFrom: 'Shop <shop@example.com>',
      idempotency: 'off',
      reconcile: false,
      connections: 4,
      allowInsecureHttp: true,
    });
  });

  it('leaves unset and blank optional variables to the module defaults', () => {
    expect(
      parseEmailEnv({
        EMAIL_API_KEY: SECRET,
        EMAIL_BASE_URL: 'https://mail.example.com',
        EMAIL_TIMEOUT_MS: ' ',
      }),
    ).toEqual({ apiKey: SECRET, baseUrl: 'https://mail.example.com' });
  });

  it('gives options that log without the key, and still carry it when spread', () => {
    const options = parseEmailEnv({ EMAIL_API_KEY: SECRET, EMAIL_BASE_URL: 'https://mail.example.com' });
    expect(inspect(options, { depth: 5, showHidden: false })).not.toContain(SECRET);
    expect(inspect(options)).toContain('[redacted]');
    expect(JSON.stringify(options)).not.toContain(SECRET);
    expect(JSON.stringify({ email: options })).toContain('"apiKey":"[redacted]"');
    expect({ ...options }.apiKey).toBe(SECRET);
    expect(options.apiKey).toBe(SECRET);
  });

  it('names every bad variable in one error, with the bad value, never the key', () => {
    const err = envError({
      EMAIL_API_KEY: `${SECRET} \n`,
      EMAIL_BASE_URL: 'https://user:pw@',
      EMAIL_TIMEOUT_MS: '30s',
      EMAIL_CONNECT_TIMEOUT_MS: '0',
      EMAIL_MAX_RETRIES: '-1',
      EMAIL_DEFAULT_FROM: 'a@example.com',
      EMAIL_IDEMPOTENCY: 'sometimes',
      EMAIL_RECONCILE: 'yes',
      EMAIL_CONNECTIONS: '1.5',
      EMAIL_ALLOW_INSECURE_HTTP: '1',
    });
    expect([...err.variables].sort()).toEqual(
      [
        'EMAIL_API_KEY',
        'EMAIL_BASE_URL',
        'EMAIL_TIMEOUT_MS',
        'EMAIL_CONNECT_TIMEOUT_MS',
        'EMAIL_MAX_RETRIES',
        'EMAIL_IDEMPOTENCY',
        'EMAIL_RECONCILE',
        'EMAIL_CONNECTIONS',
        'EMAIL_ALLOW_INSECURE_HTTP',
      ].sort(),
    );
    expect(err.message).toContain('EMAIL_TIMEOUT_MS must be a whole number of milliseconds');
    expect(err.message).toContain('(got "30s")');
    expect(err.message).toContain('EMAIL_MAX_RETRIES must be a whole number of 0 or more (got "-1")');
    expect(err.message).toContain('EMAIL_IDEMPOTENCY must be auto or off (got "sometimes")');
    expect(err.message).toContain('EMAIL_RECONCILE must be true or false (got "yes")');
    expect(err.message).toContain('EMAIL_ALLOW_INSECURE_HTTP must be true or false (got "1")');
    expect(err.message).toContain('EMAIL_API_KEY must not contain whitespace');
    expect(err.message).not.toContain('pw@'); // a base URL may carry credentials: never shown
    for (const text of [err.message, String(err.stack), JSON.stringify(err)]) {
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain(SECRET.slice(8, 24));
    }
  });

  it('requires EMAIL_BASE_URL; an unset EMAIL_API_KEY is left for the module to decide (accounts or not)', () => {
    const err = envError({ EMAIL_TIMEOUT_MS: '1000' });
    expect(err.variables).toEqual(['EMAIL_BASE_URL']);
    expect(err.message).toMatch(/EMAIL_BASE_URL is required/);
    const keyless = parseEmailEnv({ EMAIL_BASE_URL: 'https://mail.example.com', EMAIL_MAX_RETRIES: '1' });
    expect(keyless.apiKey).toBeUndefined();
    expect({ ...keyless }).toMatchObject({ baseUrl: 'https://mail.example.com', maxRetries: 1 });
    // the rest is still checked, as for a module with accounts
    expect(
      envError({ EMAIL_BASE_URL: 'https://mail.example.com', EMAIL_MAX_RETRIES: 'x' }).variables,
    ).toEqual(['EMAIL_MAX_RETRIES']);
  });

  it('reports the module rules in terms of variables (plain http to a remote host)', () => {
    const env = { EMAIL_API_KEY: SECRET, EMAIL_BASE_URL: 'http://mail.example.com' };
    const err = envError(env);
    expect(err.variables).toEqual(['EMAIL_BASE_URL']);
    expect(err.message).toMatch(/EMAIL_BASE_URL uses plain http .* EMAIL_ALLOW_INSECURE_HTTP=true/);
    expect(parseEmailEnv({ ...env, EMAIL_ALLOW_INSECURE_HTTP: 'TRUE' }).allowInsecureHttp).toBe(true);
  });

  it('hides a bad value that contains the key (a key pasted into the wrong variable)', () => {
    const err = envError({
      EMAIL_API_KEY: SECRET,
      EMAIL_BASE_URL: 'https://m.example.com',
      EMAIL_TIMEOUT_MS: SECRET,
    });
    expect(err.message).toContain('EMAIL_TIMEOUT_MS must be');
    expect(err.message).not.toContain(SECRET);
  });

  it('reads prefixed variables', () => {
    const options = parseEmailEnv(
      {
        MARKETING_EMAIL_API_KEY: SECRET,
        MARKETING_EMAIL_BASE_URL: 'https://m.example.com',
        EMAIL_API_KEY: 'other',
      },
      { prefix: 'MARKETING_EMAIL_' },
    );
    expect(options).toEqual({ apiKey: SECRET, baseUrl: 'https://m.example.com' });
    expect(envError({ MARKETING_EMAIL_RECONCILE: 'no' }, 'MARKETING_EMAIL_').variables).toEqual([
      'MARKETING_EMAIL_BASE_URL',
      'MARKETING_EMAIL_RECONCILE',
    ]);
  });
});

// Own testing modules (not emailApp): the options come through ConfigModule and forRootAsync.
describe('emailConfig with ConfigModule', () => {
  const sandbox = useSandbox();
  const saved = { ...process.env };

  afterEach(() => {
    for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
    Object.assign(process.env, saved);
  });

  it('is the whole setup: env to options to a working EmailService', async () => {
    Object.assign(process.env, {
      EMAIL_API_KEY: sandbox.apiKey,
      EMAIL_BASE_URL: sandbox.baseUrl,
      EMAIL_TIMEOUT_MS: '4321',
      EMAIL_MAX_RETRIES: '1',
    });
    const moduleRef = await Test.createTestingModule({
      imports: [
        ConfigModule.forRoot({ ignoreEnvFile: true }),
        EmailModule.forRootAsync({
          imports: [ConfigModule.forFeature(emailConfig)],
          inject: [emailConfig.KEY],
          useFactory: (config: ConfigType<typeof emailConfig>) => ({ ...config, logger: false }),
        }),
      ],
    }).compile();
    try {
      expect(emailConfig.KEY).toBe('CONFIGURATION(email)');
      expect(moduleRef.get(ConfigService).get('email.timeoutMs')).toBe(4321);
      const before = sandbox.requests().length;
      await expect(moduleRef.get(EmailService).list({ limit: 1 })).resolves.toEqual([]);
      expect(sandbox.requests().length).toBe(before + 1);
    } finally {
      await moduleRef.close();
    }
  });

  it('works with asProvider() alone', async () => {
    Object.assign(process.env, { EMAIL_API_KEY: sandbox.apiKey, EMAIL_BASE_URL: sandbox.baseUrl });
    // Made by @nestjs/config's own registerAs even in Jest's ESM mode: it imports the very ConfigModule
    // the app has (a stand-in would import a promise of one).
    const [imported] = emailConfig.asProvider().imports;
    expect(imported).not.toBeInstanceOf(Promise);
    expect((imported as { module?: unknown }).module).toBe(ConfigModule);
    const moduleRef = await Test.createTestingModule({
      imports: [EmailModule.forRootAsync(emailConfig.asProvider())],
    }).compile();
    try {
      await expect(moduleRef.get(EmailService).list({ limit: 1 })).resolves.toEqual([]);
    } finally {
      await moduleRef.close();
    }
  });

  it('stops the boot with one error naming every bad variable, never the key', async () => {
    Object.assign(process.env, {
      EMAIL_API_KEY: SECRET,
      EMAIL_BASE_URL: sandbox.baseUrl,
      EMAIL_TIMEOUT_MS: '30s',
      EMAIL_RECONCILE: 'maybe',
    });
    const err = await Test.createTestingModule({
      imports: [
        EmailModule.forRootAsync({
          imports: [ConfigModule.forFeature(emailConfig)],
          inject: [emailConfig.KEY],
          useFactory: (config: ConfigType<typeof emailConfig>) => config,
        }),
      ],
    })
      .compile()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EmailEnvError);
    const message = (err as Error).message;
    expect(message).toMatch(/EMAIL_TIMEOUT_MS.*"30s"/);
    expect(message).toMatch(/EMAIL_RECONCILE.*"maybe"/);
    expect(message).not.toContain(SECRET);
  });

  it('an app with accounts needs no EMAIL_API_KEY: the module knows it has accounts, boots and sends for them', async () => {
    const acme = sandbox.mailbox();
    try {
      Object.assign(process.env, { EMAIL_BASE_URL: sandbox.baseUrl, EMAIL_MAX_RETRIES: '0' });
      delete process.env.EMAIL_API_KEY;
      @Injectable()
      class TenantAccounts {
        resolve(id: string) {
          return id === 'acme' ? { apiKey: acme.apiKey } : null;
        }
      }
      const moduleRef = await Test.createTestingModule({
        imports: [
          EmailModule.forRootAsync({
            imports: [ConfigModule.forFeature(emailConfig)],
            inject: [emailConfig.KEY],
            useFactory: (config: ConfigType<typeof emailConfig>) => ({
              ...config,
              accounts: TenantAccounts,
              logger: false,
            }),
          }),
        ],
        providers: [TenantAccounts],
      }).compile();
      try {
        const email = moduleRef.get(EmailService);
        const mail = { from: 'orders@example.com', to: ['ada@example.org'], subject: 'Hi', text: 'x' };
        await email.send(mail, { account: 'acme' });
        expect(acme.sent().map((m) => m.subject)).toEqual(['Hi']);
        await expect(email.send(mail)).rejects.toMatchObject({ problem: 'no-account' });
      } finally {
        await moduleRef.close();
      }
    } finally {
      await acme.close();
    }
  });

  it('without accounts, an unset EMAIL_API_KEY stops the boot with an error naming the variable', async () => {
    Object.assign(process.env, { EMAIL_BASE_URL: sandbox.baseUrl, SHOP_EMAIL_BASE_URL: sandbox.baseUrl });
    delete process.env.EMAIL_API_KEY;
    const boot = (config: EmailConfigFactory) =>
      Test.createTestingModule({ imports: [EmailModule.forRootAsync(config.asProvider())] })
        .compile()
        .catch((e: unknown) => e);
    const err = await boot(emailConfig);
    expect(err).toBeInstanceOf(EmailOptionsError);
    expect((err as Error).message).toMatch(
      /apiKey is required.*set EMAIL_API_KEY, or give the module accounts/,
    );
    const shop = await boot(createEmailConfig({ namespace: 'shopEmail', prefix: 'SHOP_EMAIL_' }));
    expect((shop as Error).message).toContain('set SHOP_EMAIL_API_KEY');
  });

  it('createEmailConfig makes another namespace with another prefix', () => {
    process.env.SHOP_EMAIL_API_KEY = SECRET;
    process.env.SHOP_EMAIL_BASE_URL = 'https://shop-mail.example.com';
    const shop = createEmailConfig({ namespace: 'shopEmail', prefix: 'SHOP_EMAIL_' });
    expect(shop.KEY).toBe('CONFIGURATION(shopEmail)');
    expect(shop()).toEqual({ apiKey: SECRET, baseUrl: 'https://shop-mail.example.com' });
  });
});

// The package without @nestjs/config (it loads, and emailConfig says what to install when used) runs in
// plain Node against a copy of lib/ without it: test/nest/optional-peers.spec.ts.
describe('a missing @nestjs/config', () => {
  it('only a missing package itself counts as "not installed"', () => {
    const code = 'ERR_MODULE_NOT_FOUND';
    const own = { code, message: "Cannot find package '@nestjs/config' imported from /app/x.js" };
    const dependency = {
      code,
      message: "Cannot find package 'lodash' imported from /app/node_modules/@nestjs/config",
    };
    expect(isMissingModule(own, '@nestjs/config')).toBe(true);
    expect(isMissingModule(dependency, '@nestjs/config')).toBe(false);
    expect(isMissingModule(new SyntaxError("Unexpected token '@nestjs/config'"), '@nestjs/config')).toBe(
      false,
    );
  });
});
