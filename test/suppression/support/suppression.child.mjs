// Another process on the same suppression list: the suppression specs' second process.
//   node --import <ts-esm register> suppression.child.mjs <lib dir URL> ts
// with env EMAIL_BASE_URL, EMAIL_API_KEY and EMAIL_SUPPRESSION (the `suppression` option as JSON). Prints
// "ready", then answers one line per command read from stdin:
//   add <address> <reason>   -> "added <address> <version>" or "add-failed <error name>"
//   remove <address>         -> "removed <address> <count>"
//   send <address>           -> "sent <address> <id>" or "refused <address> <error name>"
//   holds <address>          -> "holds <address> yes|no" (this process's local copy alone, no round trip)
//   version                  -> "version <n>" (the last version the local copy applied)
import 'reflect-metadata';
import { createInterface } from 'node:readline';
import { NestFactory } from '@nestjs/core';

const [libUrl, ext] = process.argv.slice(2);
const lib = await import(`${libUrl}/index.${ext}`);
const env = process.env;
const app = await NestFactory.createApplicationContext(
  lib.EmailModule.forRoot({
    apiKey: env.EMAIL_API_KEY,
    baseUrl: env.EMAIL_BASE_URL,
    logger: false,
    suppression: JSON.parse(env.EMAIL_SUPPRESSION),
  }),
  { logger: false },
);
const email = app.get(lib.EmailService);
const suppressions = app.get(lib.EmailSuppressions);
const gate = suppressions.gate;
const say = (line) => process.stdout.write(`${line}\n`);
say('ready');

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  const [command, address, reason] = line.trim().split(' ');
  try {
    if (command === 'add') {
      await suppressions.add(address, { reason });
      say(`added ${address} ${gate.mirror.version}`);
    } else if (command === 'remove') {
      say(`removed ${address} ${await suppressions.remove(address)}`);
    } else if (command === 'send') {
      const record = await email.send({
        from: env.EMAIL_FROM ?? 'orders@shop.test',
        to: [address],
        subject: 'Hi',
        text: 'Hello',
      });
      say(`sent ${address} ${record.id}`);
    } else if (command === 'holds') {
      say(
        `holds ${address} ${gate.mirror.trusted && gate.screen([address], undefined) !== undefined ? 'yes' : 'no'}`,
      );
    } else if (command === 'version') {
      say(`version ${gate.mirror.version}`);
    } else if (command === 'quit') {
      break;
    }
  } catch (err) {
    say(
      `${command === 'add' ? 'add-failed' : command === 'send' ? `refused ${address}` : 'failed'} ${err?.name}`,
    );
  }
}
await app.close();
