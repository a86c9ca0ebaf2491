// An app as @nestjs/bullmq users write it: BullModule.forRoot holds the connection, a @Processor of their
// own sends with idempotencyKeyFrom, and our queue reuses that connection and targets a named EmailService.
import { Injectable, Module } from '@nestjs/common';
import { BullModule, InjectQueue, Processor, WorkerHost } from '@nestjs/bullmq';
import { Test } from '@nestjs/testing';
import type { Job, Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { EmailModule, EmailService, InjectEmailService } from '../../lib/index.js';
import { EmailQueue, EmailQueueModule, EmailQueueWorker, idempotencyKeyFrom } from '../../lib/queue/index.js';
import { EmailQueueProcessorHost } from '../../lib/queue/email-queue.worker.js';
import { until } from './support/queue-processes.js';
import { freshQueueName, mail, useQueueWorld } from './queue.support.js';

const world = useQueueWorld();

describe('EmailQueueModule in a @nestjs/bullmq app', () => {
  it('reuses BullModule.forRoot, sends through the named EmailService, beside a @Processor of the app', async () => {
    const ownQueue = freshQueueName();

    @Processor(ownQueue)
    class WelcomeProcessor extends WorkerHost {
      constructor(@InjectEmailService('tx') private readonly email: EmailService) {
        super();
      }
      async process(job: Job<{ address: string }>) {
        return this.email.send(
          { from: 'shop@example.com', to: [job.data.address], subject: 'Welcome', text: 'Hello' },
          { idempotencyKey: idempotencyKeyFrom(job.queueName, String(job.id)) },
        );
      }
    }

    @Injectable()
    class Signup {
      constructor(
        @InjectQueue(ownQueue) readonly welcome: Queue,
        readonly emails: EmailQueue,
      ) {}
    }

    @Module({
      imports: [BullModule.registerQueue({ name: ownQueue })],
      providers: [WelcomeProcessor, Signup],
    })
    class FeatureModule {}

    const { port } = new URL(world.redis.url);
    const moduleRef = await Test.createTestingModule({
      imports: [
        BullModule.forRoot({ connection: { host: '127.0.0.1', port: Number(port) }, prefix: 'app' }),
        // The default instance points nowhere: the queue must send through 'tx'.
        EmailModule.forRoot({ apiKey: 'unused-key', baseUrl: 'http://127.0.0.1:1', logger: false }),
        EmailModule.forRoot({
          name: 'tx',
          isGlobal: true,
          apiKey: world.sandbox.apiKey,
          baseUrl: world.sandbox.baseUrl,
          logger: false,
        }),
        EmailQueueModule.forRoot({ emailService: 'tx', allowVolatileRedis: true, isGlobal: true }),
        FeatureModule,
      ],
    }).compile();
    await moduleRef.init();
    const redis = new Redis(world.redis.url);
    try {
      const signup = moduleRef.get(Signup);
      const input = mail();
      await signup.emails.send(input, { jobId: 'nest-1' });
      const record = await signup.emails.waitFor('nest-1', { timeoutMs: 10_000 });
      expect(world.sandbox.messages().find((m) => m.id === record.id)?.subject).toBe(input.subject);
      // BullModule's connection and prefix: the job lives under 'app:email:'.
      expect(await redis.exists('app:email:@nest-1')).toBe(1); // BullMQ's id of the job id: bullJobIdOf
      // The queue's worker is a @nestjs/bullmq processor (a WorkerHost @nestjs/bullmq found and started),
      // so the app's tooling sees it like its own processors; EmailQueueWorker hands out its BullMQ worker.
      const host = moduleRef.get(EmailQueueProcessorHost);
      expect(host).toBeInstanceOf(WorkerHost);
      expect((host as WorkerHost).worker.name).toBe('email');
      expect(moduleRef.get(EmailQueueWorker).worker).toBe((host as WorkerHost).worker);
      await signup.welcome.add('welcome', { address: 'grace@example.com' }, { jobId: 'w-1' });
      await until(() => world.sandbox.messages().length === 2, 10_000, "the app's own processor");
      const key = idempotencyKeyFrom(ownQueue, 'w-1');
      expect(world.sandbox.requests().some((r) => r.headers['idempotency-key'] === key)).toBe(true);
    } finally {
      redis.disconnect();
      await moduleRef.close();
    }
  });

  it('forRootAsync with a factory, and a boot error that names a missing connection', async () => {
    const ok = await Test.createTestingModule({
      imports: [
        EmailModule.forRoot({ apiKey: world.sandbox.apiKey, baseUrl: world.sandbox.baseUrl, logger: false }),
        EmailQueueModule.forRootAsync({
          useFactory: async () => ({
            connection: world.redis.url,
            queueName: freshQueueName(),
            worker: false,
          }),
        }),
      ],
    }).compile();
    await ok.init();
    await ok.get(EmailQueue).send(mail(), { jobId: 'async-1' });
    expect(await ok.get(EmailQueue).status('async-1')).toMatchObject({ state: 'waiting' });
    await ok.close();
    const boot = await Test.createTestingModule({
      imports: [EmailQueueModule.forRoot({})],
    })
      .compile()
      .catch((e: unknown) => e);
    expect(String(boot)).toMatch(/connection is required.*BullModule\.forRoot/);
  });
});
