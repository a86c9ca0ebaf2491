/** An embedded PostgreSQL the sample started (a temporary directory, 127.0.0.1 only). */
export interface LocalPostgres {
  url: string;
  stop: () => Promise<void>;
}

/**
 * With DATABASE_URL set, returns null (the app uses that database). Otherwise starts a private PostgreSQL
 * from Debian's `postgresql` package (initdb in a temporary directory, as the `postgres` OS user when run
 * as root, fsync off, a free 127.0.0.1 port) through the repository's own test helper, points DATABASE_URL
 * at it and returns it; `stop()` shuts it down and removes its directory.
 */
export async function startLocalPostgres(): Promise<LocalPostgres | null> {
  if (process.env.DATABASE_URL) return null;
  // The repository's helper (test/support/postgres-server.mjs), shared with the specs and the benches.
  const helper = new URL('../../../test/support/postgres-server.mjs', import.meta.url).href;
  const { startPostgres } = (await import(helper)) as {
    startPostgres: () => Promise<{ url: string; stop: () => Promise<void> }>;
  };
  const server = await startPostgres().catch((err: unknown) => {
    throw new Error(
      `PostgreSQL could not start (${(err as Error).message}); install it (sudo apt-get install postgresql), or set DATABASE_URL`,
    );
  });
  process.env.DATABASE_URL = server.url;
  return server;
}
