// The module under test, built the way an application builds it: through Nest's injector.
import { NestFactory } from '@nestjs/core';
import { EmailModule, EmailService } from '../../../dist/index.js';
import { loadSuppressed } from '../suppressed.js';
import { API_KEY, CONNECTIONS, EMAIL } from './payload.js';

/** Addresses on the suppression list while it sends (issue 49: the gate on, checking every send). */
const SUPPRESSED = Number(process.env.BENCH_SUPPRESSED ?? 100_000);

/**
 * `EmailService.send` (validation, generated key, suppression gate over `BENCH_SUPPRESSED` addresses,
 * typed record) and `EmailService.list`.
 */
export async function createClient(baseUrl) {
  const app = await NestFactory.createApplicationContext(
    EmailModule.forRoot({ apiKey: API_KEY, baseUrl, connections: CONNECTIONS, logger: false }),
    { logger: false },
  );
  await loadSuppressed(app, SUPPRESSED);
  const email = app.get(EmailService);
  return {
    send: () => email.send(EMAIL),
    list: () => email.list({ limit: 10 }),
    close: () => app.close(),
  };
}
