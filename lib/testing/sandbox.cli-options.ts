import { readFileSync } from 'node:fs';
import type { SandboxRandomFaults } from './sandbox.fault.types.js';
import { checkAllowedHosts } from './sandbox.host.js';
import type { SandboxOptions, SandboxPlan, SandboxTemplate } from './sandbox.options.js';

/** Port the command listens on unless told otherwise: the same on every start, so apps keep their settings. */
export const SANDBOX_CLI_PORT = 4010;
/** Key the command accepts unless told otherwise: the same on every start (a test key, not a secret). */
export const SANDBOX_CLI_KEY = 'sk_test_email_sandbox_local_0001';

/** What the `email-sandbox` command line asks for. */
export interface SandboxCliOptions {
  options: SandboxOptions;
  /** Random faults to switch on, from `--chaos`/`--seed`. */
  chaos: SandboxRandomFaults | null;
  help: boolean;
}

/** Usage text of `email-sandbox`. */
export const SANDBOX_CLI_USAGE = `Usage: email-sandbox [options]

Runs the Transactional Email Service sandbox on 127.0.0.1 until interrupted.

  --port N          port to listen on (default: ${SANDBOX_CLI_PORT}; 0 picks a free port)
  --key KEY         API key to accept (repeatable; default: ${SANDBOX_CLI_KEY})
  --domain DOMAIN   verified sending domain (repeatable; default: example.com, example.test)
  --plan PLAN       free | growth (default: growth)
  --base-path PATH  path prefix of every route, e.g. /api (default: none)
  --allowed-host H  also answer requests whose Host is H (repeatable; default: loopback names only)
  --templates FILE  templates from a JSON file: { "1": { "subject": "Hi {{name}}", "html": "...", "text": "..." } }
  --idempotency-scope S
                    account | key: whether an Idempotency-Key is shared by the keys of one account
                    or each key has its own (default: account)
  --data DIR        keep mailboxes and messages in DIR across restarts (default: kept in memory only)
  --chaos P         inject random faults into a share P (0 to 1) of requests
  --seed N          seed of the random faults (default: 1)
  -h, --help        show this text
`;

/**
 * Parses the arguments of `email-sandbox` (without `node` and the script path); throws on a bad one.
 *
 * @example
 * parseSandboxCli(['--port', '4010', '--plan', 'free']).options; // { port: 4010, plan: 'free' }
 */
export function parseSandboxCli(argv: readonly string[]): SandboxCliOptions {
  const options: SandboxOptions = {};
  const keys: string[] = [];
  const domains: string[] = [];
  const allowedHosts: string[] = [];
  let probability: number | null = null;
  let seed = 1;
  let help = false;
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined || v.startsWith('--')) throw new Error(`${flag} needs a value`);
      return v;
    };
    switch (flag) {
      case '--port':
        options.port = integer(flag, value(), 0, 65535);
        break;
      case '--key':
        keys.push(value());
        break;
      case '--domain':
        domains.push(value());
        break;
      case '--plan': {
        const plan = value();
        if (plan !== 'free' && plan !== 'growth') throw new Error('--plan is free or growth');
        options.plan = plan as SandboxPlan;
        break;
      }
      case '--allowed-host':
        allowedHosts.push(value());
        break;
      case '--base-path':
        options.basePath = value();
        break;
      case '--templates':
        options.templates = readTemplates(value());
        break;
      case '--idempotency-scope': {
        const scope = value();
        if (scope !== 'account' && scope !== 'key') throw new Error('--idempotency-scope is account or key');
        options.idempotencyScope = scope;
        break;
      }
      case '--data':
        options.dataDir = value();
        break;
      case '--chaos':
        probability = Number(value());
        if (!(probability >= 0 && probability <= 1)) throw new Error('--chaos is a number from 0 to 1');
        break;
      case '--seed':
        seed = integer(flag, value(), 0, 2 ** 32 - 1);
        break;
      case '-h':
      case '--help':
        help = true;
        break;
      default:
        throw new Error(`unknown option ${flag}`);
    }
  }
  options.port ??= SANDBOX_CLI_PORT;
  options.keys = keys.length ? keys : [SANDBOX_CLI_KEY];
  if (domains.length) options.domains = domains;
  if (allowedHosts.length) options.allowedHosts = checkAllowedHosts(allowedHosts);
  return { options, chaos: probability === null ? null : { probability, seed }, help };
}

/** Reads `--templates FILE`: an object of template ids to `{ subject, html?, text? }`. */
function readTemplates(file: string): Record<number, SandboxTemplate> {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`--templates ${file}: ${(err as Error).message}`, { cause: err });
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new Error(
      `--templates ${file}: expected an object of template ids, e.g. { "1": { "subject": "Hi" } }`,
    );
  }
  const out: Record<number, SandboxTemplate> = {};
  for (const [id, t] of Object.entries(data as Record<string, unknown>)) {
    const tpl = t as Partial<SandboxTemplate> | null;
    const optional = (v: unknown) => v === undefined || v === null || typeof v === 'string';
    if (
      !/^\d{1,9}$/.test(id) ||
      typeof tpl?.subject !== 'string' ||
      !optional(tpl.html) ||
      !optional(tpl.text)
    ) {
      throw new Error(
        `--templates ${file}: template ${id} needs an integer id and { subject, html?, text? } strings`,
      );
    }
    out[Number(id)] = { subject: tpl.subject, html: tpl.html ?? null, text: tpl.text ?? null };
  }
  return out;
}

function integer(flag: string, text: string, min: number, max: number): number {
  const n = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!(n >= min && n <= max)) throw new Error(`${flag} must be an integer from ${min} to ${max}`);
  return n;
}
