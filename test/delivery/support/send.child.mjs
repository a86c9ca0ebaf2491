// Another process that sends through EmailService: the look-alike specs' second process.
//   node --import <ts-esm register> send.child.mjs <lib dir URL>   with env EMAIL_BASE_URL, EMAIL_API_KEY and
//   EMAIL_INPUT (JSON). Prints the record's id, or "error <name>", and exits.
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';

const [libUrl] = process.argv.slice(2);
const lib = await import(`${libUrl}/index.ts`);
const env = process.env;
const app = await NestFactory.createApplicationContext(
  lib.EmailModule.forRoot({ apiKey: env.EMAIL_API_KEY, baseUrl: env.EMAIL_BASE_URL, logger: false }),
  { logger: false },
);
try {
  const record = await app.get(lib.EmailService).send(JSON.parse(env.EMAIL_INPUT));
  process.stdout.write(`${record.id}\n`);
} catch (err) {
  process.stdout.write(`error ${err?.name}\n`);
} finally {
  await app.close();
}
