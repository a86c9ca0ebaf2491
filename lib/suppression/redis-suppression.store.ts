import type { Cluster, Redis } from 'ioredis';
import { EmailOptionsError } from '../errors/email-options.error.js';
import { isRedisClient, openRedis, type RedisConnectionInput } from '../peers/ioredis.loader.js';
import { BOOT_CONNECT_MIN_MS, raceDeadline, withTimeout } from '../time/clock.helpers.js';
import { encodeEntry, SUPPRESSION_DEFAULTS } from './suppression.constants.js';
import type {
  StoreWatcher,
  StoredPage,
  SuppressionChange,
  SuppressionOp,
  SuppressionStore,
  SuppressionWrite,
} from './suppression-store.interface.js';

type RedisClient = Redis | Cluster;

/** Longest and shortest wait of one `XREAD` for a change before it asks again (a frozen Redis is seen then). */
const BLOCK_MAX_MS = 5_000;
const BLOCK_MIN_MS = 1_000;
const RETRY_MAX_MS = 5_000;

/**
 * One batch, atomically: each op's field set (a learned op only over nothing that refuses now and nothing
 * as recent as its record), the paging index kept to the entries that suppress, the version counted once,
 * and the change appended to the stream under the version as its id (what every process reads).
 * KEYS: entries (hash), index (sorted set), version, log (stream). ARGV: now, kept versions, then
 * (field, value, learnedAt or '') triples. Returns { version, applied flags }.
 */
const WRITE = `
local now = tonumber(ARGV[1])
local applied = {}
local changed = {}
local n = (#ARGV - 2) / 3
for i = 0, n - 1 do
  local field, value, learned = ARGV[3 + i * 3], ARGV[4 + i * 3], ARGV[5 + i * 3]
  local ok = true
  if learned ~= '' then
    local cur = redis.call('HGET', KEYS[1], field)
    if cur then
      local code, time = string.match(cur, '^(%d+)|[^|]*|([^|]*)$')
      code = tonumber(code)
      time = tonumber(time)
      if code and time and ((code > 0 and (time == 0 or time > now)) or time >= tonumber(learned)) then
        ok = false
      end
    end
  end
  if ok then
    redis.call('HSET', KEYS[1], field, value)
    if string.sub(value, 1, 2) == '0|' then
      redis.call('ZREM', KEYS[2], field)
    else
      redis.call('ZADD', KEYS[2], 0, field)
    end
    changed[#changed + 1] = field
    changed[#changed + 1] = value
  end
  applied[i + 1] = ok and 1 or 0
end
local v = tonumber(redis.call('GET', KEYS[3]) or '0')
if #changed > 0 then
  v = redis.call('INCR', KEYS[3])
  redis.call('XADD', KEYS[4], 'MAXLEN', '~', ARGV[2], v .. '-0', unpack(changed))
end
return { v, applied }
`;

/** The changes of `XRANGE`/`XREAD` entries (`[id, [field, value, ...]]`). */
function changesOf(entries: Array<[string, string[]]>): SuppressionChange[] {
  return entries.map(([id, flat]) => {
    const ops: Array<{ field: string; value: string }> = [];
    for (let i = 0; i + 1 < flat.length; i += 2) ops.push({ field: flat[i], value: flat[i + 1] });
    return { version: Number(id.split('-')[0]), ops };
  });
}

/** The reason Redis gave, without a URL (it may carry a password). */
const reason = (err: unknown): string =>
  (err instanceof Error ? err.message : String(err)).replace(/rediss?:\/\/\S+/g, '<url>');

/**
 * The list in Redis, shared by every process with the same prefix: a hash of entries, a sorted set of the
 * suppressing ones (pages in address order), a version and a stream of changes. Each process follows the
 * stream with a blocking `XREAD` on a connection of its own from the last version it applied, so nothing
 * is missed across a reconnect (Redis pub/sub would drop what was published meanwhile); a process that
 * fell behind the stream's length (`keepChanges`) reads everything again.
 */
export class RedisSuppressionStore implements SuppressionStore {
  readonly kind = 'redis';
  private client!: RedisClient;
  private reader?: RedisClient;
  private ownClient = false;
  private closed = false;
  private readonly keys: { entries: string; index: string; version: string; log: string };

  constructor(
    /** The connection as given; a client (the app's, or the `rateLimit` limiter's) is used as it is, never closed. */
    private readonly connection: RedisConnectionInput,
    private readonly prefix: string,
    private readonly timeoutMs: number,
    /** The option its connection came from, which its boot error names. */
    private readonly option: 'suppression.redis' | 'rateLimit.redis' = 'suppression.redis',
  ) {
    this.keys = {
      entries: `${prefix}:entries`,
      index: `${prefix}:index`,
      version: `${prefix}:version`,
      log: `${prefix}:log`,
    };
  }

  get connected(): boolean {
    return this.client?.status === 'ready';
  }

  async open(): Promise<void> {
    const given = this.connection;
    if (isRedisClient(given)) this.client = given;
    else {
      this.client = this.openOwn(given);
      this.ownClient = true;
    }
    try {
      const deadline = Math.max(this.timeoutMs, BOOT_CONNECT_MIN_MS);
      if (this.ownClient) await withTimeout(this.client.connect(), deadline, 'Redis');
      await withTimeout(this.client.ping(), deadline, 'Redis');
    } catch (err) {
      if (this.ownClient) this.client.disconnect();
      throw new EmailOptionsError([`${this.option}: cannot reach Redis (${reason(err)})`]);
    }
  }

  private openOwn(connection: RedisConnectionInput): RedisClient {
    const client = openRedis(
      connection,
      // a Cluster connects at once unless its own options say lazyConnect (its nodes' options do not reach it)
      {
        node: { maxRetriesPerRequest: 1, lazyConnect: true, disconnectTimeout: 200 },
        cluster: { lazyConnect: true },
      },
      'EmailModule suppression.redis',
    );
    client.on('error', () => undefined); // reconnects on its own; the gate falls back meanwhile
    return client;
  }

  async write(ops: readonly SuppressionOp[], now: number): Promise<SuppressionWrite> {
    const { entries, index, version, log } = this.keys;
    const args: Array<string | number> = [now, SUPPRESSION_DEFAULTS.keepChanges];
    for (const op of ops)
      args.push(op.field, encodeEntry(op.entry), op.learnedAt === undefined ? '' : op.learnedAt);
    const [v, applied] = (await this.client.eval(WRITE, 4, entries, index, version, log, ...args)) as [
      number,
      number[],
    ];
    return { version: Number(v), applied: applied.map((a) => a === 1) };
  }

  async read(fields: readonly string[]): Promise<Array<string | null>> {
    if (fields.length === 0) return [];
    return this.client.hmget(this.keys.entries, ...fields);
  }

  async page(scope: string, after: string | undefined, limit: number): Promise<StoredPage> {
    const from = after === undefined ? `[${scope}\n` : `(${scope}\n${after}`;
    const fields = await this.client.zrangebylex(
      this.keys.index,
      from,
      `(${scope}\x0b`,
      'LIMIT',
      0,
      limit + 1,
    );
    const taken = fields.slice(0, limit);
    const values = taken.length === 0 ? [] : await this.client.hmget(this.keys.entries, ...taken);
    return { fields: taken, values: values.map((v) => v ?? ''), more: fields.length > limit };
  }

  async snapshot(each: (field: string, value: string) => void): Promise<number> {
    const version = Number((await this.client.get(this.keys.version)) ?? 0);
    let cursor = '0';
    do {
      const [next, flat] = await this.client.hscan(this.keys.entries, cursor, 'COUNT', 2000);
      for (let i = 0; i + 1 < flat.length; i += 2) each(flat[i], flat[i + 1]);
      cursor = next;
    } while (cursor !== '0');
    return version;
  }

  async changesSince(version: number): Promise<SuppressionChange[] | null> {
    const out: SuppressionChange[] = [];
    let from = version + 1;
    for (;;) {
      const entries = (await this.client.xrange(this.keys.log, `${from}-0`, '+', 'COUNT', 1000)) as Array<
        [string, string[]]
      >;
      const changes = changesOf(entries);
      if (changes.length > 0 && changes[0].version !== from) return null; // trimmed past what we need
      if (changes.length === 0) {
        const current = Number((await this.client.get(this.keys.version)) ?? 0);
        return current >= from ? null : out;
      }
      out.push(...changes);
      from = changes[changes.length - 1].version + 1;
    }
  }

  watch(watcher: StoreWatcher, from: number): Promise<boolean> {
    const blockMs = Math.min(BLOCK_MAX_MS, Math.max(BLOCK_MIN_MS, this.timeoutMs * 2));
    const reader = openRedis(
      this.client as RedisConnectionInput,
      { node: { maxRetriesPerRequest: 1, disconnectTimeout: 200 } },
      'EmailModule suppression.redis',
    );
    this.reader = reader;
    reader.on('error', () => undefined);
    void this.follow(reader, watcher, from, blockMs);
    return Promise.resolve(true); // the stream is read by version: nothing after `from` can be missed
  }

  /**
   * Reads the stream from the last version the copy applied, for as long as the store is open. A read that
   * fails (a closed connection, a Redis that stopped answering) tells the copy it is behind; the next one
   * that works, that it is back.
   */
  private async follow(
    reader: RedisClient,
    watcher: StoreWatcher,
    from: number,
    blockMs: number,
  ): Promise<void> {
    let pauseMs = 100;
    let last = from;
    let down = false;
    while (!this.closed) {
      try {
        // A read that outlives its block by a command's deadline means a Redis that stopped answering. The
        // deadline is ours, not the client's `commandTimeout`: a read in flight when the connection dropped
        // is never settled by the client once it is closed, and its timer would keep the process alive.
        const read = reader.xread('BLOCK', blockMs, 'STREAMS', this.keys.log, `${last}-0`);
        const res = (await raceDeadline(
          read,
          blockMs + this.timeoutMs,
          () => {
            throw new Error(`a read took longer than ${blockMs + this.timeoutMs} ms`);
          },
          { keepAlive: false },
        )) as Array<[string, Array<[string, string[]]>]> | null;
        pauseMs = 100;
        if (down) {
          down = false;
          watcher.back();
        }
        if (!res || res.length === 0) continue;
        const changes = changesOf(res[0][1]);
        if (changes.length === 0) continue;
        last = changes[changes.length - 1].version;
        watcher.changes(changes);
      } catch (err) {
        if (this.closed) return;
        if (!down) {
          down = true;
          watcher.lost(`its Redis stopped answering (${reason(err)})`);
        }
        await new Promise((r) => setTimeout(r, pauseMs).unref?.());
        pauseMs = Math.min(pauseMs * 2, RETRY_MAX_MS);
      }
    }
  }

  async ping(): Promise<void> {
    await this.client.ping();
  }

  async claim(name: string, ms: number): Promise<boolean> {
    return (await this.client.set(`${this.prefix}:claim:${name}`, '1', 'PX', ms, 'NX')) === 'OK';
  }

  async close(): Promise<void> {
    this.closed = true;
    this.reader?.disconnect();
    if (!this.ownClient) return;
    if (this.client.status !== 'ready') return this.client.disconnect();
    await withTimeout(this.client.quit(), this.timeoutMs, 'Redis').catch(() => this.client.disconnect());
  }
}
