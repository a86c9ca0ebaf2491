/**
 * What a PostgreSQL error code says about the database the outbox talks to, in words an operator can act on: the
 * failures a failover, a pooler and a DBA's limits bring (a connection that cannot even start has no code).
 */
const MEANINGS: Readonly<Record<string, string>> = {
  '25006':
    'read-only: a standby, or a former primary still reachable during a failover; writes go through once the address reaches the new primary',
  '57P01': 'the server ended the connection (a shutdown, a restart or a failover)',
  '57P02': 'the server ended the connection after a crash of another backend',
  '57P03': 'the server does not take connections yet (starting up, or recovering)',
  '53300': "max_connections is reached: the server takes no more of this role's connections",
  '53400': 'a connection limit of the role or the database is reached',
  '57014': 'statement_timeout (or a cancel) stopped the statement',
  '25P03': 'idle_in_transaction_session_timeout ended a transaction left idle',
  '55P03': 'lock_timeout: a lock was not granted in time',
  '42501': 'the role lacks a privilege',
  '3D000': 'the database does not exist',
  '3F000': "the outbox's schema does not exist",
  '42P01': "a table of the outbox's schema does not exist",
  '26000': 'a named statement is missing on this connection (a pooler in transaction mode?)',
  '42P05': 'a named statement exists already on this connection (a pooler in transaction mode?)',
  '08P01': 'protocol violation (a pooler refused what the client sent?)',
};

/**
 * A PostgreSQL failure in one line for errors and logs: the server's message, then its code and what that means
 * here where it is one the outbox knows (`cannot execute INSERT in a read-only transaction (25006: read-only: a
 * standby, ...)`). Never a connection string or a password: only the server's or the driver's message.
 */
export function describePgFailure(err: unknown): string {
  return `${(err as Error | undefined)?.message ?? String(err)}${pgFailureNote(err)}`;
}

/** ` (<code>: <what it means>)` of a PostgreSQL failure, ` (<code>)` for a code the outbox does not know, or ''. */
export function pgFailureNote(err: unknown): string {
  const code = (err as { code?: unknown } | undefined)?.code;
  if (typeof code !== 'string') return '';
  const meaning = MEANINGS[code];
  return ` (${code}${meaning === undefined ? '' : `: ${meaning}`})`;
}
