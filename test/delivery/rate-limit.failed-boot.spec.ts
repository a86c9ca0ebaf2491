import { Module, type DynamicModule } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import { EmailModule, EmailService, type EmailModuleOptions } from '../../lib/index.js';
import { redisClientsOf, startCountingServer, until } from '../support/connections.js';
import { startRedis, type TestRedis } from '../support/redis-server.mjs';
import { useSandbox } from '../support/sandbox.js';

const sandbox = useSandbox({ reset: true });
let redis: TestRedis;

beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

@Module({})
class BrokenModule {
  /** A module built after EmailModule (its provider needs EmailService) whose factory throws: the boot fails. */
  static after(email: DynamicModule): DynamicModule {
    return {
      module: BrokenModule,
      imports: [email],
      providers: [
        {
          provide: 'BROKEN',
          inject: [EmailService],
          useFactory: () => {
            throw new Error('a bad setting of the app');
          },
        },
      ],
    };
  }
}

const emailModule = (url: string, more: Partial<EmailModuleOptions> = {}) =>
  EmailModule.forRoot({
    apiKey: sandbox.apiKey,
    baseUrl: sandbox.baseUrl,
    rateLimit: { recipients: { limit: 100, intervalMs: 1000 }, redis: url, prefix: 'failed-boot' },
    ...more,
  });

// Nest never closes a module whose boot failed: a connection the limiter opened while Nest built the app would
// reconnect for the life of the process. The limiter's Redis connects when the module initialises (the boot's
// check that it answers), or at its first use.
describe('rateLimit.redis and the boot', () => {
  it('a boot that fails on another provider after EmailModule was built opens no connection', async () => {
    // Stands in for Redis at an address of its own: it counts the connections made to it.
    const server = await startCountingServer();
    try {
      await expect(
        Test.createTestingModule({ imports: [BrokenModule.after(emailModule(server.url))] }).compile(),
      ).rejects.toThrow('a bad setting of the app');
      expect(await server.arrivedBeforeNow()).toBe(0);
    } finally {
      await server.close();
    }
  });

  it('an app that boots connects when it initialises, and closes its connections with the app', async () => {
    const checker = new Redis(redis.url);
    try {
      const moduleRef = await Test.createTestingModule({ imports: [emailModule(redis.url)] }).compile();
      expect(await redisClientsOf(checker)).toBe(0); // built, not initialised
      await moduleRef.init();
      expect(await redisClientsOf(checker)).toBeGreaterThanOrEqual(1); // the limiter's (and the suppression list's)
      await moduleRef.get(EmailService).send({
        from: 'shop@example.com',
        to: ['ada@example.org'],
        subject: 'Hello',
        text: 'counted in Redis',
      });
      expect(await checker.keys('failed-boot:*')).not.toEqual([]);
      await moduleRef.close();
      await until(async () => (await redisClientsOf(checker)) === 0);
    } finally {
      checker.disconnect();
    }
  });

  it('a module never initialised connects at its first send, and counts in Redis', async () => {
    const checker = new Redis(redis.url);
    const moduleRef = await Test.createTestingModule({
      imports: [emailModule(redis.url, { suppression: false })],
    }).compile();
    try {
      await moduleRef.get(EmailService).send({
        from: 'shop@example.com',
        to: ['bob@example.org'],
        subject: 'Hello',
        text: 'before init',
      });
      expect(sandbox.messages()).toHaveLength(1);
      expect(await checker.keys('failed-boot:*')).not.toEqual([]);
    } finally {
      await moduleRef.close();
      checker.disconnect();
    }
  });

  it('a Redis that does not answer still fails the boot, naming the option, when the module initialises', async () => {
    const server = await startCountingServer(); // accepts, never answers
    const url = server.url.replace('redis://', 'redis://:hunter2@');
    try {
      const moduleRef = await Test.createTestingModule({
        imports: [emailModule(url, { suppression: false })],
      }).compile();
      const err = (await moduleRef.init().catch((e: unknown) => e)) as Error;
      expect(err.message).toContain('rateLimit.redis: cannot reach Redis');
      expect(err.message).not.toContain('hunter2');
      await moduleRef.close();
    } finally {
      await server.close();
    }
  }, 20_000);
});
