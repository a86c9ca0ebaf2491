import { registerAs } from '@nestjs/config';

/** Settings of the sample app itself (the email module reads its own `EMAIL_*` variables). */
export interface SampleSettings {
  /** Sender of the notification jobs and the template endpoint. Env `SAMPLE_FROM`. */
  from: string;
  /** Redis of the notification queue. Env `REDIS_URL` (`npm run sample` starts one when unset). */
  redisUrl: string;
  /** First wait before a failed or uncertain job is tried again, in ms. Env `NOTIFICATION_RETRY_MS`. */
  retryDelayMs: number;
  /** Attempts before a job is given up. Env `NOTIFICATION_MAX_ATTEMPTS`. */
  maxAttempts: number;
}

const positive = (raw: string | undefined, fallback: number): number => {
  const n = Number(raw);
  return raw !== undefined && raw !== '' && Number.isInteger(n) && n > 0 ? n : fallback;
};

/** `ConfigModule.forFeature(sampleConfig)` makes these settings injectable as `sampleConfig.KEY`. */
export const sampleConfig = registerAs('sample', (): SampleSettings => ({
  from: process.env.SAMPLE_FROM || 'Sample App <hello@example.com>',
  redisUrl: process.env.REDIS_URL || 'redis://127.0.0.1:6379',
  retryDelayMs: positive(process.env.NOTIFICATION_RETRY_MS, 5000),
  maxAttempts: positive(process.env.NOTIFICATION_MAX_ATTEMPTS, 5),
}));
