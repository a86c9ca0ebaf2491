import type { Client, ClientConfig, Pool } from 'pg';
import type { PgModule } from '../peers/optional-peer.loader.js';

/** How long the listener waits before connecting again, doubled per failure up to the cap. */
const RETRY_FIRST_MS = 250;
const RETRY_MAX_MS = 10_000;

/**
 * One dedicated connection (never a pool's) that `LISTEN`s on the outbox's channel and reports each
 * notification: PostgreSQL delivers a NOTIFY when the transaction that issued it commits, never after a
 * rollback, so a worker hears of a job the moment it can be fetched. The connection is opened again with
 * backoff when it drops (a restart, a network cut); `onReady` runs after each (re)connection, since a
 * notification sent meanwhile is lost and the worker should look once. Polling stays the fallback: a
 * listener that cannot connect (a pooler in transaction mode refuses LISTEN) only leaves the worker polling.
 */
export class OutboxNotifyListener {
  private client?: Client;
  private closed = false;
  private retryMs = RETRY_FIRST_MS;
  private timer?: NodeJS.Timeout;
  /** True while the LISTEN connection is up. */
  listening = false;

  constructor(
    private readonly pg: PgModule,
    private readonly connection: string | Pool,
    private readonly channel: string,
    private readonly onNotify: (payload: string) => void,
    private readonly onReady: () => void,
    private readonly onTrouble: (message: string) => void,
  ) {}

  start(): void {
    void this.connect();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    const client = this.client;
    this.client = undefined;
    this.listening = false;
    if (client) await client.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const client = new this.pg.Client(this.config());
    this.client = client;
    let dropped = false;
    const drop = (why: string) => {
      if (dropped || this.client !== client) return;
      dropped = true;
      this.listening = false;
      this.client = undefined;
      void client.end().catch(() => undefined);
      if (this.closed) return;
      this.onTrouble(`LISTEN connection lost (${why}): polling until it is back`);
      this.timer = setTimeout(() => void this.connect(), this.retryMs);
      this.timer.unref?.();
      this.retryMs = Math.min(RETRY_MAX_MS, this.retryMs * 2);
    };
    client.on('error', (err: Error) => drop(err.message));
    client.on('end', () => drop('ended'));
    client.on('notification', (msg: { channel: string; payload?: string }) => {
      if (msg.channel === this.channel) this.onNotify(msg.payload ?? '');
    });
    try {
      await client.connect();
      await client.query(`LISTEN "${this.channel}"`);
    } catch (err) {
      drop((err as Error).message);
      return;
    }
    if (this.client !== client) return;
    this.listening = true;
    this.retryMs = RETRY_FIRST_MS;
    this.onReady();
  }

  /** The connection settings: the connection string, or those of the app's pool (a client of its own). */
  private config(): ClientConfig {
    if (typeof this.connection === 'string')
      return { connectionString: this.connection, connectionTimeoutMillis: 5000, keepAlive: true };
    const options = (this.connection as unknown as { options?: ClientConfig }).options ?? {};
    return { ...options, keepAlive: true };
  }
}
