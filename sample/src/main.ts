import 'reflect-metadata';
import { sampleBanner } from './app.banner.js';
import { createSampleApp } from './app.setup.js';
import { startLocalPostgres } from './postgres/local-postgres.js';
import { startLocalRedis } from './redis/local-redis.js';
import { startLocalSandbox } from './sandbox/local-sandbox.js';
import { registerConsoleTelemetry } from './stack/otel-console.js';

/**
 * Starts the sample on 127.0.0.1:PORT (default 3000). Without EMAIL_BASE_URL it runs against an
 * embedded sandbox; with EMAIL_BASE_URL and EMAIL_API_KEY it uses that service. Without REDIS_URL it
 * starts an embedded redis-server for the notification queue, and without DATABASE_URL an embedded
 * PostgreSQL for the orders and their confirmation emails (the outbox); both stopped on Ctrl+C and on exit.
 */
async function main(): Promise<void> {
  const port = Number(process.env.PORT ?? 3000);
  // Before the app: the email module's spans and metrics then go to the console (OTEL=console).
  const stopTelemetry = registerConsoleTelemetry();
  const redis = await startLocalRedis();
  const postgres = await startLocalPostgres().catch(async (err: unknown) => {
    await redis?.stop();
    throw err;
  });
  const sandbox = await startLocalSandbox();
  const app = await createSampleApp({ sandbox, redis, postgres }).catch(async (err: unknown) => {
    await sandbox?.close();
    await redis?.stop();
    await postgres?.stop();
    throw err;
  });
  try {
    await app.listen(port, '127.0.0.1');
  } catch (err) {
    await app.close();
    throw err;
  }
  const url = `http://127.0.0.1:${port}`;
  const banner = sampleBanner({
    url,
    sandbox,
    redisUrl: redis?.url ?? null,
    postgresUrl: postgres?.url ?? null,
    telemetry: Boolean(stopTelemetry),
  });
  if (stopTelemetry) app.getHttpServer().on('close', () => void stopTelemetry());
  console.log(['', ...banner, ''].join('\n'));
}

main().catch((err: unknown) => {
  const code = (err as { code?: string }).code;
  const hint = code === 'EADDRINUSE' ? ' (set PORT, or SANDBOX_PORT, to a free port)' : '';
  console.error(`The sample could not start${hint}:`, err instanceof Error ? err.message : err);
  process.exit(1);
});
