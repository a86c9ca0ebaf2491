import { isClusterConnection, isClusterNodes, isRedisClient } from '../peers/ioredis.loader.js';
import { clusterNodesProblems, clusterPrefixProblem } from '../peers/redis-cluster.helpers.js';
import { hashSecretOf } from './secret-safe.options.js';
import type { ResolvedRateLimitOptions } from '../interfaces/rate-limit-options.interface.js';
import type {
  EmailSuppressionPgPool,
  ResolvedSuppressionOptions,
} from '../interfaces/suppression.interface.js';

/**
 * The `hashAddresses` secret of each resolved option, held outside it: no property of the resolved options (which
 * a spec or a debugger may inspect with the module's providers) leads to it.
 */
const secrets = new WeakMap<ResolvedSuppressionOptions, string>();

/** The `hashAddresses` secret of resolved options, or undefined. */
export function suppressionSecretOf(options: ResolvedSuppressionOptions): string | undefined {
  return secrets.get(options);
}

/** Defaults of the `suppression` option (the store's own are in `suppression/suppression.constants.ts`). */
const DEFAULT_PREFIX = 'email-suppression';
const DEFAULT_SCHEMA = 'public';
const DEFAULT_MAX_LOCAL = 2_000_000;
const DEFAULT_TIMEOUT_MS = 2_000;
/** The shortest sweep interval: one list request per account and interval must stay a small share of the budgets. */
export const SWEEP_MIN_MS = 10_000;
/** The shortest `hashAddresses` secret. */
const MIN_SECRET = 16;

const KNOWN = new Set([
  'redis',
  'postgres',
  'store',
  'prefix',
  'schema',
  'learn',
  'sweep',
  'partial',
  'hashAddresses',
  'whenStoreDown',
  'maxLocalEntries',
  'commandTimeoutMs',
]);

const show = (value: unknown): string =>
  typeof value === 'string'
    ? JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)
    : Array.isArray(value)
      ? 'an array'
      : value === null
        ? 'null'
        : typeof value === 'object'
          ? 'an object'
          : String(value);

const isPool = (value: unknown): value is EmailSuppressionPgPool =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as EmailSuppressionPgPool).query === 'function' &&
  typeof (value as EmailSuppressionPgPool).connect === 'function';

/** Nothing to configure: memory, or the `rateLimit` Redis when there is one. */
function defaults(rateLimit: ResolvedRateLimitOptions | undefined): ResolvedSuppressionOptions['store'] {
  if (rateLimit?.redis === undefined) return { kind: 'memory' };
  const prefix = isClusterConnection(rateLimit.redis) ? `{${DEFAULT_PREFIX}}` : DEFAULT_PREFIX;
  return { kind: 'redis', prefix };
}

/** Checks the store part (`redis`, `postgres`, `store`, `prefix`, `schema`). */
function storeOf(
  o: Record<string, unknown>,
  rateLimit: ResolvedRateLimitOptions | undefined,
  problems: string[],
): ResolvedSuppressionOptions['store'] | undefined {
  const { redis, postgres, store } = o;
  if (store !== undefined && store !== 'memory')
    problems.push(`suppression.store must be 'memory' (got ${show(store)})`);
  const given = [redis, postgres, store].filter((v) => v !== undefined).length;
  if (given > 1) {
    problems.push('suppression: give at most one of redis, postgres and store');
    return undefined;
  }
  if (store === 'memory') return { kind: 'memory' };
  if (postgres !== undefined) {
    if (typeof postgres === 'string' ? !/^postgres(ql)?:\/\//.test(postgres) : !isPool(postgres))
      problems.push(
        'suppression.postgres must be a postgres:// or postgresql:// connection string (not shown: it may carry a password) or a pg Pool',
      );
    const schema = o.schema ?? DEFAULT_SCHEMA;
    if (typeof schema !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]{0,49}$/.test(schema))
      problems.push(
        `suppression.schema must be a PostgreSQL name: letters, digits and _, not starting with a digit (got ${show(schema)})`,
      );
    return {
      kind: 'postgres',
      postgres: postgres as string | EmailSuppressionPgPool,
      schema: schema as string,
    };
  }
  if (o.schema !== undefined) problems.push('suppression.schema is for postgres only');
  const onRedis = redis ?? rateLimit?.redis;
  if (onRedis === undefined) {
    if (o.prefix !== undefined)
      problems.push('suppression.prefix is for a Redis store (redis, or the rateLimit Redis)');
    return { kind: 'memory' };
  }
  if (typeof redis === 'string' && !/^rediss?:\/\//.test(redis))
    problems.push(
      'suppression.redis must be a redis:// or rediss:// URL (not shown: it may carry a password)',
    );
  else if (redis !== undefined && typeof redis !== 'string') {
    if (typeof redis !== 'object' || redis === null || Array.isArray(redis))
      problems.push(
        'suppression.redis must be a Redis URL, ioredis options, an ioredis client or Cluster, or { cluster: [...] }',
      );
    else if (isClusterNodes(redis)) problems.push(...clusterNodesProblems(redis, 'suppression.redis'));
  }
  const onCluster = isClusterConnection(onRedis);
  const prefix = o.prefix ?? (onCluster ? `{${DEFAULT_PREFIX}}` : DEFAULT_PREFIX);
  if (typeof prefix !== 'string' || prefix === '' || /[\s\n]/.test(prefix)) {
    problems.push(`suppression.prefix must be a non-empty string without spaces (got ${show(prefix)})`);
  } else if (onCluster) {
    const problem = clusterPrefixProblem(prefix, 'suppression.prefix');
    if (problem !== undefined) problems.push(problem);
  }
  return {
    kind: 'redis',
    ...(redis === undefined ? {} : { redis: redis as string | Record<string, unknown> }),
    prefix: prefix as string,
  };
}

/** Checks `learn` and `sweep`. */
function learningOf(
  o: Record<string, unknown>,
  problems: string[],
): Pick<ResolvedSuppressionOptions, 'learn' | 'sweep'> {
  const { learn, sweep } = o;
  let into: ResolvedSuppressionOptions['learn'] = 'account';
  if (learn === false) into = false;
  else if (typeof learn === 'object' && learn !== null && !Array.isArray(learn)) {
    const extra = Object.keys(learn).filter((k) => k !== 'into');
    if (extra.length > 0) problems.push(`suppression.learn: unknown option ${JSON.stringify(extra[0])}`);
    const given = (learn as { into?: unknown }).into ?? 'account';
    if (given !== 'account' && given !== 'all-accounts')
      problems.push(`suppression.learn.into must be 'account' or 'all-accounts' (got ${show(given)})`);
    else into = given;
  } else if (learn !== undefined && learn !== true)
    problems.push("suppression.learn must be a boolean or { into: 'account' | 'all-accounts' }");
  if (sweep === undefined) return { learn: into };
  if (typeof sweep !== 'object' || sweep === null || Array.isArray(sweep)) {
    problems.push('suppression.sweep must be an object { everyMs, accounts? }');
    return { learn: into };
  }
  const { everyMs, accounts } = sweep as { everyMs?: unknown; accounts?: unknown };
  const extra = Object.keys(sweep).filter((k) => k !== 'everyMs' && k !== 'accounts');
  if (extra.length > 0) problems.push(`suppression.sweep: unknown option ${JSON.stringify(extra[0])}`);
  if (!(Number.isSafeInteger(everyMs) && (everyMs as number) >= SWEEP_MIN_MS))
    problems.push(
      `suppression.sweep.everyMs must be an integer of at least ${SWEEP_MIN_MS} (got ${show(everyMs)})`,
    );
  const listed = Array.isArray(accounts) && accounts.every((a) => typeof a === 'string' && a !== '');
  if (accounts !== undefined && typeof accounts !== 'function' && !listed)
    problems.push(
      'suppression.sweep.accounts must be an array of account ids or a function that returns one',
    );
  if (into === false) problems.push('suppression.sweep needs learn: a sweep only learns');
  return { learn: into, sweep: sweep as ResolvedSuppressionOptions['sweep'] };
}

/**
 * Checks the `suppression` option, adding one line per problem to `problems` (named in the module's one
 * `EmailOptionsError`). Without it, the list is on, in the `rateLimit` Redis when there is one, else in
 * memory; `false` turns it off.
 */
export function resolveSuppression(
  raw: unknown,
  problems: string[],
  rateLimit: ResolvedRateLimitOptions | undefined,
): ResolvedSuppressionOptions {
  const base: ResolvedSuppressionOptions = {
    enabled: raw !== false,
    store: defaults(rateLimit),
    learn: 'account',
    partial: 'refuse',
    whenStoreDown: 'last-known',
    maxLocalEntries: DEFAULT_MAX_LOCAL,
    commandTimeoutMs: DEFAULT_TIMEOUT_MS,
    hashed: false,
  };
  if (raw === undefined || raw === true || raw === false) return Object.freeze(base);
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw) || isRedisClient(raw)) {
    problems.push('suppression must be false or an object { redis?, postgres?, learn?, partial?, ... }');
    return base;
  }
  const o = raw as Record<string, unknown>;
  for (const key of Object.keys(o))
    if (!KNOWN.has(key) && o[key] !== undefined)
      problems.push(`unknown option suppression.${JSON.stringify(key)}`);
  const store = storeOf(o, rateLimit, problems) ?? base.store;
  const { partial = 'refuse', whenStoreDown = 'last-known', hashAddresses } = o;
  if (partial !== 'refuse' && partial !== 'send-to-rest')
    problems.push(`suppression.partial must be 'refuse' or 'send-to-rest' (got ${show(partial)})`);
  if (whenStoreDown !== 'last-known' && whenStoreDown !== 'refuse')
    problems.push(`suppression.whenStoreDown must be 'last-known' or 'refuse' (got ${show(whenStoreDown)})`);
  let secret: string | undefined;
  if (hashAddresses !== undefined) {
    const given = hashSecretOf(hashAddresses);
    if (typeof given !== 'string' || given.length < MIN_SECRET)
      problems.push(
        `suppression.hashAddresses.secret must be a string of at least ${MIN_SECRET} characters (not shown)`,
      );
    else secret = given;
  }
  const maxLocalEntries = o.maxLocalEntries ?? DEFAULT_MAX_LOCAL;
  if (!(Number.isSafeInteger(maxLocalEntries) && (maxLocalEntries as number) >= 1))
    problems.push(`suppression.maxLocalEntries must be a positive integer (got ${show(maxLocalEntries)})`);
  const commandTimeoutMs = o.commandTimeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!(typeof commandTimeoutMs === 'number' && Number.isFinite(commandTimeoutMs) && commandTimeoutMs > 0))
    problems.push(`suppression.commandTimeoutMs must be a positive number (got ${show(commandTimeoutMs)})`);
  const resolved: ResolvedSuppressionOptions = Object.freeze({
    ...base,
    store,
    ...learningOf(o, problems),
    partial: partial as ResolvedSuppressionOptions['partial'],
    whenStoreDown: whenStoreDown as ResolvedSuppressionOptions['whenStoreDown'],
    hashed: secret !== undefined,
    maxLocalEntries: maxLocalEntries as number,
    commandTimeoutMs: commandTimeoutMs as number,
  });
  if (secret !== undefined) secrets.set(resolved, secret);
  return resolved;
}
