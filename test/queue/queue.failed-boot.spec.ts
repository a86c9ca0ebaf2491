import { Module, type DynamicModule } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import { EmailModule } from '../../lib/index.js';
import { EmailQueue, EmailQueueModule } from '../../lib/queue/index.js';
import { redisClientsOf, startCountingServer, until } from '../support/connections.js';
import { freshQueueName, useQueueWorld } from './queue.support.js';

const world = useQueueWorld();

@Module({})
class BrokenModule {
  /** A module built after the queue's (its provider needs EmailQueue) whose factory throws: the boot fails. */
  static after(queue: DynamicModule): DynamicModule {
    return {
      module: BrokenModule,
      imports: [queue],
      providers: [
        {
          provide: 'BROKEN',
          inject: [EmailQueue],
          useFactory: () => {
            throw new Error('a bad setting of the app');
          },
        },
      ],
    };
  }
}

const emailModule = () =>
  EmailModule.forRoot({ apiKey: world.sandbox.apiKey, baseUrl: world.sandbox.baseUrl });

// A boot that fails on another provider never reaches app.close(), so nothing the module opened while Nest
// built it would ever be closed: connections that reconnect for the life of the process (a Jest worker then
// "failed to exit gracefully"; the sample's spec of bad EMAIL_* variables did it). The queue opens its
// connections when the module initialises instead, or at their first use.
describe('a boot that fails after the queue module was built', () => {
  it('opens no connection', async () => {
    // Stands in for Redis at an address of its own: it counts the connections made to it.
    const server = await startCountingServer();
    try {
      const queue = EmailQueueModule.forRoot({ connection: server.url, queueName: freshQueueName() });
      await expect(
        Test.createTestingModule({ imports: [emailModule(), BrokenModule.after(queue)] }).compile(),
      ).rejects.toThrow('a bad setting of the app');
      expect(await server.arrivedBeforeNow()).toBe(0);
    } finally {
      await server.close();
    }
  });

  it('an app that boots connects when it initialises, and closes its connections with the app', async () => {
    const checker = new Redis(world.redis.url);
    try {
      const moduleRef = await Test.createTestingModule({
        imports: [
          emailModule(),
          EmailQueueModule.forRoot({ connection: world.redis.url, queueName: freshQueueName() }),
        ],
      }).compile();
      expect(await redisClientsOf(checker)).toBe(0); // built, not initialised
      await moduleRef.init();
      await until(async () => (await redisClientsOf(checker)) >= 2); // the producer and the worker's
      await moduleRef.get(EmailQueue).ping();
      await moduleRef.close();
      await until(async () => (await redisClientsOf(checker)) === 0);
    } finally {
      checker.disconnect();
    }
  });

  it('a module never initialised connects at the first use', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        emailModule(),
        EmailQueueModule.forRoot({ connection: world.redis.url, queueName: freshQueueName() }),
      ],
    }).compile();
    try {
      await moduleRef.get(EmailQueue).ping(); // answers: the producer connected on demand
    } finally {
      await moduleRef.close();
    }
  });
});
