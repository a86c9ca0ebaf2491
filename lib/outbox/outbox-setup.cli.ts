#!/usr/bin/env node
import { OUTBOX_SETUP_USAGE, outboxSetupSql, parseOutboxSetupArgs } from './outbox-setup.helpers.js';

/**
 * Entry point of `email-outbox-sql` (the SQL a DBA runs for `migrate: false`): prints it, or what is wrong with
 * the arguments (exit code 2).
 */
function main(): void {
  try {
    const options = parseOutboxSetupArgs(process.argv.slice(2));
    process.stdout.write(options === 'help' ? OUTBOX_SETUP_USAGE : outboxSetupSql(options));
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    process.stderr.write(`email-outbox-sql: ${message}\n\n${OUTBOX_SETUP_USAGE}`);
    process.exitCode = 2;
  }
}

main();
