import { EmailOptionsError } from '../errors/email-options.error.js';
import type { EmailModuleOptions } from '../interfaces/email-module-options.interface.js';
import { resolveEmailOptions } from './email.options.js';
import { EmailEnvError } from '../errors/email-env.error.js';
import { secretSafe } from './secret-safe.options.js';
import { UNSET_KEY_VARIABLE } from './email.constants.js';

/**
 * Options of `parseEmailEnv` and `createEmailConfig`.
 * @publicApi
 */
export interface EmailEnvOptions {
  /** Prefix of every variable name, e.g. `'MARKETING_EMAIL_'` for `MARKETING_EMAIL_API_KEY`. @default 'EMAIL_' */
  prefix?: string;
}

/**
 * The environment variable (after the prefix) of each option `emailConfig` reads.
 * @example `${prefix}${EMAIL_ENV_VARIABLES.timeoutMs}` // 'EMAIL_TIMEOUT_MS'
 */
export const EMAIL_ENV_VARIABLES = {
  apiKey: 'API_KEY',
  baseUrl: 'BASE_URL',
  timeoutMs: 'TIMEOUT_MS',
  connectTimeoutMs: 'CONNECT_TIMEOUT_MS',
  maxRetries: 'MAX_RETRIES',
  defaultFrom: 'DEFAULT_FROM',
  idempotency: 'IDEMPOTENCY',
  reconcile: 'RECONCILE',
  connections: 'CONNECTIONS',
  allowInsecureHttp: 'ALLOW_INSECURE_HTTP',
} as const satisfies Partial<Record<keyof EmailModuleOptions, string>>;

type EnvOption = keyof typeof EMAIL_ENV_VARIABLES;
type Env = Readonly<Record<string, string | undefined>>;

/** Largest delay a Node timer accepts. */
const MAX_TIMER_MS = 2_147_483_647;

class EnvReader {
  readonly problems = new Map<string, string>();
  readonly options: Record<string, unknown> = {};
  private readonly secret: string | undefined;

  constructor(
    private readonly env: Env,
    readonly prefix: string,
  ) {
    const key = env[prefix + EMAIL_ENV_VARIABLES.apiKey];
    this.secret = key !== undefined && key.trim() !== '' ? key : undefined;
  }

  name(option: EnvOption): string {
    return this.prefix + EMAIL_ENV_VARIABLES[option];
  }

  /** The value, or undefined when unset or blank. */
  raw(option: EnvOption): string | undefined {
    const value = this.env[this.name(option)];
    return value === undefined || value.trim() === '' ? undefined : value;
  }

  /** A bad value, quoted and shortened; hidden when it contains the API key. */
  show(value: string): string {
    if (this.secret !== undefined && value.includes(this.secret))
      return '(value hidden: it contains the API key)';
    return JSON.stringify(value.length > 40 ? value.slice(0, 40) + '…' : value);
  }

  fail(option: EnvOption, problem: string): void {
    const name = this.name(option);
    if (!this.problems.has(name)) this.problems.set(name, `${name} ${problem}`);
  }

  integer(option: EnvOption, min: number, max: number, what: string): void {
    const raw = this.raw(option);
    if (raw === undefined) return;
    const text = raw.trim();
    const value = /^\d+$/.test(text) ? Number(text) : NaN;
    if (Number.isSafeInteger(value) && value >= min && value <= max) this.options[option] = value;
    else this.fail(option, `must be ${what} (got ${this.show(raw)})`);
  }

  choice(option: EnvOption, allowed: readonly string[], convert: (text: string) => unknown): void {
    const raw = this.raw(option);
    if (raw === undefined) return;
    const text = raw.trim().toLowerCase();
    if (allowed.includes(text)) this.options[option] = convert(text);
    else this.fail(option, `must be ${allowed.join(' or ')} (got ${this.show(raw)})`);
  }
}

function readRequired(r: EnvReader): void {
  const apiKey = r.raw('apiKey');
  if (apiKey !== undefined) r.options.apiKey = apiKey; // unset: the module decides (it needs accounts then)
  const baseUrl = r.raw('baseUrl')?.trim();
  if (baseUrl === undefined) {
    r.fail('baseUrl', 'is required: the base URL of the email service, e.g. https://mail.example.com');
  } else if (!URL.canParse(baseUrl)) {
    r.fail('baseUrl', 'must be an absolute http(s) URL'); // not shown: a URL may carry credentials
  } else {
    r.options.baseUrl = baseUrl;
  }
}

/** Rewrites a problem found by `resolveEmailOptions` in terms of variables; undefined when its variable already failed. */
function translate(r: EnvReader, problem: string): [string, string] | undefined {
  const first = problem.split(' ', 1)[0] as EnvOption;
  const variable = first in EMAIL_ENV_VARIABLES ? r.name(first) : `${r.prefix}*`;
  if (r.problems.has(variable)) return undefined;
  let text = problem.replace(/allowInsecureHttp: true/g, `${r.name('allowInsecureHttp')}=true`);
  for (const option of Object.keys(EMAIL_ENV_VARIABLES) as EnvOption[]) {
    text = text.replace(new RegExp(`\\b${option}\\b`, 'g'), r.name(option));
  }
  return [variable, text];
}

/**
 * Reads the module's options from environment variables (`EMAIL_API_KEY`, `EMAIL_BASE_URL`,
 * `EMAIL_TIMEOUT_MS`, `EMAIL_CONNECT_TIMEOUT_MS`, `EMAIL_MAX_RETRIES`, `EMAIL_DEFAULT_FROM`,
 * `EMAIL_IDEMPOTENCY`, `EMAIL_RECONCILE`, `EMAIL_CONNECTIONS`, `EMAIL_ALLOW_INSECURE_HTTP`).
 * Parsing is strict (`"30s"` is not a number of milliseconds); a blank variable counts as unset.
 * Throws one `EmailEnvError` naming every bad variable, without ever showing the API key.
 *
 * `EMAIL_API_KEY` may be left unset for an app whose module is given `accounts` (each account's key comes
 * from its resolver): the options then have no `apiKey`, and the module, which sees whether it has
 * `accounts`, decides when it boots; without `accounts` its boot stops with an error that names the variable.
 *
 * @example
 * EmailModule.forRoot(parseEmailEnv(process.env))
 * EmailModule.forRoot({ ...parseEmailEnv(process.env, { prefix: 'MARKETING_EMAIL_' }), name: 'marketing' })
 * EmailModule.forRoot({ ...parseEmailEnv(process.env), accounts: TenantAccounts }) // no EMAIL_API_KEY needed
 * @publicApi
 */
export function parseEmailEnv(env: Env = process.env, options: EmailEnvOptions = {}): EmailModuleOptions {
  const r = new EnvReader(env, options.prefix ?? 'EMAIL_');
  readRequired(r);
  const ms = `a whole number of milliseconds from 1 to ${MAX_TIMER_MS}`;
  r.integer('timeoutMs', 1, MAX_TIMER_MS, ms);
  r.integer('connectTimeoutMs', 1, MAX_TIMER_MS, ms);
  r.integer('maxRetries', 0, Number.MAX_SAFE_INTEGER, 'a whole number of 0 or more');
  r.integer('connections', 1, Number.MAX_SAFE_INTEGER, 'a whole number of 1 or more');
  r.choice('idempotency', ['auto', 'off'], (text) => text);
  r.choice('reconcile', ['true', 'false'], (text) => text === 'true');
  r.choice('allowInsecureHttp', ['true', 'false'], (text) => text === 'true');
  const defaultFrom = r.raw('defaultFrom')?.trim();
  if (defaultFrom !== undefined) r.options.defaultFrom = defaultFrom;

  const keyless = r.options.apiKey === undefined;
  try {
    // Without a key, the rest is checked as for a module with accounts: the module itself decides at boot.
    const accounts = keyless ? { accounts: () => null } : {};
    resolveEmailOptions({ ...(r.options as unknown as EmailModuleOptions), ...accounts, logger: false });
  } catch (err) {
    if (!(err instanceof EmailOptionsError)) throw err;
    for (const problem of err.problems) {
      const found = translate(r, problem);
      if (found) r.problems.set(...found);
    }
  }
  if (r.problems.size > 0) throw new EmailEnvError([...r.problems.values()], [...r.problems.keys()]);
  if (keyless) (r.options as Record<symbol, unknown>)[UNSET_KEY_VARIABLE] = r.name('apiKey');
  return secretSafe(r.options as unknown as EmailModuleOptions);
}
