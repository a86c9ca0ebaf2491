import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { ConfigType } from '@nestjs/config';
import { sampleConfig } from '../sample.config.js';
import { NotificationProcessor } from './notification.processor.js';
import { NotificationQueue } from './notification.queue.js';

/**
 * Polls the queue every `pollMs` and hands due jobs to the processor, one at a time. On shutdown it
 * stops polling and lets the attempt in progress finish.
 */
@Injectable()
export class NotificationWorker implements OnApplicationBootstrap, OnModuleDestroy {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(
    private readonly queue: NotificationQueue,
    private readonly processor: NotificationProcessor,
    @Inject(sampleConfig.KEY) private readonly settings: ConfigType<typeof sampleConfig>,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.drain(), this.settings.pollMs);
  }

  /** Called first on shutdown, before the email module closes its connections. */
  async onModuleDestroy(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** Runs every job that is due now, one after another (joins the run in progress, if any). */
  drain(): Promise<void> {
    this.running ??= (async () => {
      for (const job of this.queue.due()) await this.processor.process(job);
    })().finally(() => {
      this.running = null;
    });
    return this.running;
  }
}
