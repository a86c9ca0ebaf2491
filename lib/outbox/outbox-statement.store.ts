import { createHash } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import { holdPoolClient } from './outbox-tx.helpers.js';

/**
 * What PostgreSQL answers when a named statement cannot live on a connection: it does not exist there (a
 * pooler such as PgBouncer in transaction mode sent the bind to another server connection), or it exists
 * already (the pooler sent the parse twice). Either way the statement did not run, so running it unnamed is safe.
 */
const UNKEPT_STATEMENT = new Set(['26000', '42P05']);

/** The named statements one pool keeps at most: the worker has a handful (pg-boss's fetch may add a few). */
const MAX_NAMES = 32;

/**
 * Run once on each connection before its first named statement: plan every execution for its own values
 * (PostgreSQL 12+). A named statement may otherwise settle on a generic plan made while its tables were nearly
 * empty: measured here, a compare-and-set planned on a table of 20 records took 0.65 ms, and 17.75 ms once the
 * table held 50,000, until an ANALYZE came. Naming still saves each parse. A `SET`, not a startup option:
 * PgBouncer and hosted poolers refuse connections that carry unknown startup options.
 */
const PLAN_EACH_TIME = 'SET plan_cache_mode = force_custom_plan';

/**
 * The worker's hot statements (fetch, compare-and-sets, ends), each parsed once per connection instead of at
 * every execution, on the outbox's own pool only (on a pool the app passes they run unnamed: its sessions'
 * settings are the app's). Each name is a hash of its text, so two schemas or two pg-boss versions never share
 * one. Behind a pooler that cannot keep statements, the first refusal turns naming off for good; so does a
 * PostgreSQL without `plan_cache_mode`.
 */
export class OutboxStatements {
  private readonly names = new Map<string, string>();
  /** Connections already set to plan each execution. */
  private readonly planned = new WeakSet<PoolClient>();

  constructor(
    private readonly pool: Pool,
    private named: boolean,
  ) {}

  async query(text: string, values: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }> {
    const name = this.named ? this.nameOf(text) : undefined;
    if (name === undefined) return this.pool.query(text, values);
    const { client, release } = await holdPoolClient<PoolClient>(this.pool);
    let failed: unknown;
    try {
      if (!this.planned.has(client)) {
        if (!(await this.planEachTime(client))) return await client.query(text, values);
        this.planned.add(client);
      }
      try {
        return await client.query({ name, text, values });
      } catch (err) {
        if (!UNKEPT_STATEMENT.has(codeOf(err))) throw err;
        this.named = false;
        return await client.query(text, values);
      }
    } catch (err) {
      failed = err;
      throw err;
    } finally {
      // As `pool.query` does: a connection that failed a statement is not handed out again.
      release(failed);
    }
  }

  /** False (and nothing named from now on) where PostgreSQL has no such setting. */
  private async planEachTime(client: PoolClient): Promise<boolean> {
    try {
      await client.query(PLAN_EACH_TIME);
      return true;
    } catch (err) {
      if (codeOf(err) !== '42704') throw err; // undefined_object: no plan_cache_mode before PostgreSQL 12
      this.named = false;
      return false;
    }
  }

  private nameOf(text: string): string | undefined {
    let name = this.names.get(text);
    if (name === undefined && this.names.size < MAX_NAMES) {
      name = `email_outbox_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
      this.names.set(text, name);
    }
    return name;
  }
}

function codeOf(err: unknown): string {
  return String((err as { code?: unknown } | null)?.code);
}
