// The module under test, built the way an application builds it: through Nest's injector.
import { NestFactory } from '@nestjs/core';
import { EmailModule, EmailService } from '../../../dist/index.js';
import { API_KEY, CONNECTIONS, EMAIL } from './payload.js';

/** `EmailService.send` (validation, generated key, typed record) and `EmailService.list`. */
export async function createClient(baseUrl) {
  const app = await NestFactory.createApplicationContext(
    EmailModule.forRoot({ apiKey: API_KEY, baseUrl, connections: CONNECTIONS, logger: false }),
    { logger: false },
  );
  const email = app.get(EmailService);
  return {
    send: () => email.send(EMAIL),
    list: () => email.list({ limit: 10 }),
    close: () => app.close(),
  };
}
