import { type DynamicModule, Module, type Provider } from '@nestjs/common';
import { EMAIL_QUEUE_OPTIONS, EMAIL_QUEUE_RAW_OPTIONS } from './email-queue.constants.js';
import type {
  EmailQueueAsyncOptions,
  EmailQueueOptions,
  EmailQueueOptionsFactory,
} from './email-queue.options.js';
import { resolveEmailQueueOptions } from './email-queue-options.resolver.js';
import { EmailQueue } from './email-queue.service.js';
import { EmailQueueHealthIndicator } from './email-queue.health.js';

const resolved: Provider = {
  provide: EMAIL_QUEUE_OPTIONS,
  inject: [EMAIL_QUEUE_RAW_OPTIONS],
  useFactory: (raw: EmailQueueOptions) => resolveEmailQueueOptions(raw),
};

/**
 * Durable sending on BullMQ: registers `EmailQueue` (and `EmailQueueHealthIndicator`). Import it beside
 * `EmailModule`; it uses the app's `EmailService` wherever that is registered.
 *
 * @example
 * EmailQueueModule.forRoot({ connection: process.env.REDIS_URL!, concurrency: 20 })
 * @publicApi
 */
@Module({})
export class EmailQueueModule {
  /** Registers the queue with fixed options (checked at boot). */
  static forRoot(options: EmailQueueOptions): DynamicModule {
    return EmailQueueModule.build([{ provide: EMAIL_QUEUE_RAW_OPTIONS, useValue: options }], []);
  }

  /** Registers the queue with options built by a factory or a class (`useFactory`, `useClass`, `useExisting`). */
  static forRootAsync(options: EmailQueueAsyncOptions): DynamicModule {
    const providers: Provider[] = [];
    if (options.useFactory) {
      providers.push({
        provide: EMAIL_QUEUE_RAW_OPTIONS,
        inject: (options.inject ?? []) as never[],
        useFactory: options.useFactory as (...args: unknown[]) => EmailQueueOptions,
      });
    } else {
      const factory = options.useClass ?? options.useExisting;
      if (!factory)
        throw new TypeError('EmailQueueModule.forRootAsync needs useFactory, useClass or useExisting');
      if (options.useClass) providers.push(options.useClass);
      providers.push({
        provide: EMAIL_QUEUE_RAW_OPTIONS,
        inject: [factory],
        useFactory: (f: EmailQueueOptionsFactory) => f.createEmailQueueOptions(),
      });
    }
    return EmailQueueModule.build(providers, options.imports ?? []);
  }

  private static build(providers: Provider[], imports: DynamicModule['imports']): DynamicModule {
    return {
      module: EmailQueueModule,
      imports,
      providers: [...providers, resolved, EmailQueue, EmailQueueHealthIndicator],
      exports: [EmailQueue, EmailQueueHealthIndicator],
    };
  }
}
