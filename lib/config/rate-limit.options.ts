import { isClusterConnection, isClusterNodes } from '../peers/ioredis.loader.js';
import { clusterNodesProblems, clusterPrefixProblem } from '../peers/redis-cluster.helpers.js';
import type {
  ResolvedRateBudget,
  ResolvedRateLimitOptions,
} from '../interfaces/rate-limit-options.interface.js';

/** Prefix of the limiter's Redis keys when the option gives none. */
export const RATE_LIMIT_DEFAULT_PREFIX = 'email-rate';

/** The same on a Redis Cluster: hash-tagged, so that every key of the limiter lives on one slot. */
export const RATE_LIMIT_CLUSTER_PREFIX = `{${RATE_LIMIT_DEFAULT_PREFIX}}`;

const KNOWN = new Set(['recipients', 'requests', 'redis', 'prefix']);

const show = (value: unknown): string =>
  typeof value === 'string' ? JSON.stringify(value) : Array.isArray(value) ? 'an array' : String(value);

function budget(raw: unknown, name: string, problems: string[]): ResolvedRateBudget | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    problems.push(`rateLimit.${name} must be an object { limit, intervalMs }`);
    return undefined;
  }
  const { limit, intervalMs } = raw as { limit?: unknown; intervalMs?: unknown };
  const before = problems.length;
  if (!(Number.isSafeInteger(limit) && (limit as number) >= 1)) {
    problems.push(`rateLimit.${name}.limit must be an integer of at least 1 (got ${show(limit)})`);
  }
  if (!(Number.isSafeInteger(intervalMs) && (intervalMs as number) >= 1000)) {
    problems.push(
      `rateLimit.${name}.intervalMs must be an integer of at least 1000 (got ${show(intervalMs)})`,
    );
  }
  return problems.length === before
    ? { limit: limit as number, intervalMs: intervalMs as number }
    : undefined;
}

/** A Redis URL never shows in a message: it may carry a password. */
function checkRedis(redis: unknown, problems: string[]): void {
  if (redis === undefined) return;
  if (typeof redis === 'string') {
    if (!/^rediss?:\/\//.test(redis)) {
      problems.push(
        'rateLimit.redis must be a redis:// or rediss:// URL (not shown: it may carry a password)',
      );
    }
  } else if (typeof redis !== 'object' || redis === null || Array.isArray(redis)) {
    problems.push(
      'rateLimit.redis must be a Redis URL, ioredis options, an ioredis client or Cluster, ' +
        'or a cluster { cluster: [{ host, port }, ...] }',
    );
  } else if (isClusterNodes(redis)) {
    problems.push(...clusterNodesProblems(redis, 'rateLimit.redis'));
  }
}

/**
 * Checks an account's own `rateLimit` (its budgets only: the Redis and the prefix are the module's),
 * adding one line per problem to `problems`.
 */
export function resolveAccountBudgets(
  raw: unknown,
  problems: string[],
): Pick<ResolvedRateLimitOptions, 'recipients' | 'requests'> | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    problems.push('rateLimit must be an object { recipients?, requests? }');
    return undefined;
  }
  const o = raw as Record<string, unknown>;
  const before = problems.length;
  for (const key of Object.keys(o)) {
    if (key !== 'recipients' && key !== 'requests' && o[key] !== undefined)
      problems.push(
        `unknown option rateLimit.${JSON.stringify(key)} (an account's limits are its budgets only)`,
      );
  }
  const recipients = budget(o.recipients, 'recipients', problems);
  const requests = budget(o.requests, 'requests', problems);
  if (problems.length > before) return undefined;
  return recipients === undefined && requests === undefined ? undefined : { recipients, requests };
}

/**
 * Checks the `rateLimit` option, adding one line per problem to `problems` (the module's one
 * `EmailOptionsError` names them all). Undefined when the option is absent or wrong.
 */
export function resolveRateLimit(
  raw: unknown,
  problems: string[],
  /** With `accounts`, `{ redis }` alone is enough: it shares the accounts' limits and pauses. */
  budgetsOptional = false,
): ResolvedRateLimitOptions | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    problems.push('rateLimit must be an object { recipients?, requests?, redis?, prefix? }');
    return undefined;
  }
  const o = raw as Record<string, unknown>;
  const before = problems.length;
  for (const key of Object.keys(o)) {
    if (!KNOWN.has(key) && o[key] !== undefined)
      problems.push(`unknown option rateLimit.${JSON.stringify(key)}`);
  }
  const recipients = budget(o.recipients, 'recipients', problems);
  const requests = budget(o.requests, 'requests', problems);
  if (o.recipients === undefined && o.requests === undefined && !(budgetsOptional && o.redis !== undefined)) {
    problems.push(
      budgetsOptional
        ? "rateLimit needs recipients or requests (or both): { limit, intervalMs }, or redis alone (to share the accounts' limits)"
        : 'rateLimit needs recipients or requests (or both): { limit, intervalMs }',
    );
  }
  checkRedis(o.redis, problems);
  const onCluster = isClusterConnection(o.redis);
  const prefix = o.prefix ?? (onCluster ? RATE_LIMIT_CLUSTER_PREFIX : RATE_LIMIT_DEFAULT_PREFIX);
  if (typeof prefix !== 'string' || prefix === '') {
    problems.push(`rateLimit.prefix must be a non-empty string (got ${show(prefix)})`);
  } else if (onCluster) {
    // Refused rather than tagged for the app: processes share a budget by the exact key, so the key
    // must be the one the app wrote in every process and tool that reads it.
    const problem = clusterPrefixProblem(prefix, 'rateLimit.prefix');
    if (problem !== undefined) problems.push(problem);
  }
  if (problems.length > before) return undefined;
  return Object.freeze({
    recipients,
    requests,
    redis: o.redis as ResolvedRateLimitOptions['redis'],
    prefix: prefix as string,
  });
}
