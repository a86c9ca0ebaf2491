import { createHash } from 'node:crypto';
import type { Pool } from 'pg';

/**
 * What PostgreSQL answers when a named statement cannot live on a connection: it does not exist there (a
 * pooler such as PgBouncer in transaction mode sent the bind to another server connection), or it exists
 * already (the pooler sent the parse twice). Either way the statement did not run, so running it unnamed is safe.
 */
const UNKEPT_STATEMENT = new Set(['26000', '42P05']);

/** The named statements one pool keeps at most: the worker has a handful (pg-boss's fetch may add a few). */
const MAX_NAMES = 32;

/**
 * The worker's hot statements (fetch, compare-and-sets, ends), prepared once per connection: PostgreSQL parses
 * each once, and plans it once it has seen it a few times, instead of at every execution (about half of a
 * compare-and-set's cost). Each name is a hash of its text, so two schemas or two pg-boss versions never
 * share one. Behind a pooler that cannot keep statements, the first refusal turns naming off for good.
 */
export class OutboxStatements {
  private named = true;
  private readonly names = new Map<string, string>();

  constructor(private readonly pool: Pool) {}

  async query(text: string, values: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }> {
    const name = this.named ? this.nameOf(text) : undefined;
    if (name === undefined) return this.pool.query(text, values);
    try {
      return await this.pool.query({ name, text, values });
    } catch (err) {
      if (!UNKEPT_STATEMENT.has(String((err as { code?: unknown } | null)?.code))) throw err;
      this.named = false;
      return this.pool.query(text, values);
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
