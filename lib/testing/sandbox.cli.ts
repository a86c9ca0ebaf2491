#!/usr/bin/env node
import { EmailSandbox } from './email-sandbox.js';
import { parseSandboxCli, SANDBOX_CLI_USAGE } from './sandbox.cli-options.js';

/** Entry point of `email-sandbox`: starts the sandbox, prints where it is, stops on SIGINT/SIGTERM. */
async function main(): Promise<void> {
  let parsed;
  try {
    parsed = parseSandboxCli(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`email-sandbox: ${(err as Error).message}\n\n${SANDBOX_CLI_USAGE}`);
    process.exitCode = 2;
    return;
  }
  if (parsed.help) {
    process.stdout.write(SANDBOX_CLI_USAGE);
    return;
  }
  const sandbox = await EmailSandbox.start(parsed.options);
  if (parsed.chaos) sandbox.faults.random(parsed.chaos);
  process.stdout.write(
    `Email sandbox listening (Ctrl+C to stop)\nEMAIL_BASE_URL=${sandbox.baseUrl}\nEMAIL_API_KEY=${sandbox.apiKey}\n` +
      (sandbox.uiUrl ? `Outbox: ${sandbox.uiUrl}\n` : '') +
      (parsed.options.dataDir
        ? `Data: ${parsed.options.dataDir} (${sandbox.messages().length} messages kept)\n`
        : ''),
  );
  const stop = (signal: string) => {
    process.stdout.write(`${signal}: closing the email sandbox\n`);
    sandbox.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
}

main().catch((err: unknown) => {
  process.stderr.write(`email-sandbox: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
