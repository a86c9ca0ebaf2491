import type { Type } from '@nestjs/common';
import type { ModuleRef } from '@nestjs/core';
import type {
  EmailAccount,
  EmailAccountResolver,
  EmailAccountsOption,
} from '../interfaces/email-account.interface.js';
import type { ResolvedEmailOptions } from '../interfaces/email-module-options.interface.js';
import type { ResolvedRateLimitOptions } from '../interfaces/rate-limit-options.interface.js';
import { apiKeyProblem, checkBaseUrl, defaultFromProblem } from './email.options.js';
import { resolveAccountBudgets } from './rate-limit.options.js';

/** An account as the module uses it: its options (the module's, with the account's base URL and sender). */
export interface ResolvedAccount {
  readonly options: ResolvedEmailOptions;
  readonly apiKey: string;
  /** The account's own budgets, when it has any. */
  readonly budgets?: Pick<ResolvedRateLimitOptions, 'recipients' | 'requests'>;
}

const KNOWN = new Set(['apiKey', 'baseUrl', 'defaultFrom', 'rateLimit']);

/**
 * Checks a resolver's answer like the module's own options: the key as `apiKey` is checked (and never
 * quoted), the base URL as `baseUrl` (plain http only to loopback unless the module allows it), the sender
 * and the budgets. Answers the problems (none: the account).
 */
export function resolveAccount(
  answer: EmailAccount,
  base: ResolvedEmailOptions,
  allowInsecureHttp: boolean,
): ResolvedAccount | string[] {
  const problems: string[] = [];
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer))
    return ['the resolver must answer an object { apiKey, baseUrl?, defaultFrom?, rateLimit? } or null'];
  for (const key of Object.keys(answer)) {
    if (!KNOWN.has(key) && (answer as unknown as Record<string, unknown>)[key] !== undefined)
      problems.push(`unknown field ${JSON.stringify(key)}`);
  }
  const keyProblem = apiKeyProblem(answer.apiKey, 'apiKey');
  if (keyProblem !== undefined) problems.push(keyProblem);
  const url =
    answer.baseUrl === undefined ? base.baseUrl : checkBaseUrl(answer.baseUrl, allowInsecureHttp, problems);
  const fromProblem = defaultFromProblem(answer.defaultFrom);
  if (fromProblem !== undefined) problems.push(fromProblem);
  const budgets = resolveAccountBudgets(answer.rateLimit, problems);
  if (problems.length > 0 || url === undefined) return problems;
  const options: ResolvedEmailOptions =
    answer.baseUrl === undefined && answer.defaultFrom === undefined
      ? base
      : Object.freeze({
          ...base,
          baseUrl: url,
          origin: url.origin,
          pathPrefix: url.pathname.replace(/\/+$/, ''),
          defaultFrom: answer.defaultFrom ?? base.defaultFrom,
          // a dispatcher given to the module serves the module's own base URL only
          dispatcher: answer.baseUrl === undefined ? base.dispatcher : undefined,
        });
  return { options, apiKey: answer.apiKey, budgets };
}

/** A class (its prototype has `resolve`), as opposed to a plain function given as the resolver. */
function isResolverClass(value: unknown): value is Type<EmailAccountResolver> {
  return (
    typeof value === 'function' &&
    typeof (value.prototype as { resolve?: unknown } | undefined)?.resolve === 'function'
  );
}

/**
 * The `accounts` option as one function. A class is taken from the app's providers when it is one of them
 * (any module), else built by Nest's injector with its dependencies (`moduleRef.create`, at boot, so that a
 * dependency it cannot have fails the boot). A provider is looked up at each call, never kept from boot:
 * while the module is being built, Nest hands out an unfinished instance of a class whose dependencies are
 * still being made (a database connection), and a copy taken then would stay unfinished. (The caller caches
 * answers, so one look-up per resolver call costs nothing that shows.)
 */
export async function accountResolverOf(
  option: EmailAccountsOption | undefined,
  moduleRef: ModuleRef,
): Promise<((accountId: string) => Promise<EmailAccount | null> | EmailAccount | null) | null> {
  if (option === undefined) return null;
  if (isResolverClass(option)) {
    try {
      moduleRef.get(option, { strict: false }); // one of the app's providers: looked up at each call
    } catch {
      const built = await moduleRef.create(option);
      return (id) => built.resolve(id);
    }
    return (id) => moduleRef.get(option, { strict: false }).resolve(id);
  }
  if (typeof option === 'function') return option as (id: string) => Promise<EmailAccount | null>;
  return (id) => option.resolve(id);
}
