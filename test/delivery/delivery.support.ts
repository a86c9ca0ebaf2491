import type { ServerResponse } from 'node:http';
import type { EmailLog } from '../../lib/index.js';
import { emailLog, emailLogJson } from '../support/records.fixture.js';
import { json, type ReceivedRequest, type ScriptedServer } from '../support/scripted-server.js';

/** What the scripted server does with one POST: answer a status (with a record for 2xx), reset or hang. */
export type PostStep =
  number | 'reset' | 'hang' | { status: number; headers?: Record<string, string>; body?: unknown };

/** The input most delivery specs send. */
export const input = {
  from: 'Shop <App@Example.com>',
  to: ['ada@example.com'],
  subject: 'Order 1',
  text: 'Hello',
};

/** The record the service would create for `input`, created now. */
export function recordFor(id: number, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const now = new Date().toISOString();
  return emailLogJson({
    id,
    fromAddress: 'app@example.com',
    toAddresses: ['Ada@Example.com'],
    subject: 'Order 1',
    createdAt: now,
    updatedAt: now,
    // The bodies `GET /emails/{id}` shows (the scripted list carries them along; extra fields are tolerated).
    html: null,
    bodyText: input.text,
    ...overrides,
  });
}

/** The parsed EmailLog (as `EmailService` returns it) of a record for `input`, at the fixture's time. */
export function logFor(overrides: Partial<EmailLog> = {}): EmailLog {
  return emailLog({ subject: input.subject, ...overrides });
}

/**
 * Scripts the server: POSTs follow `posts` in order (the last step repeats), GET /emails answers
 * `list()` (an empty log by default), GET /emails/{id} answers that record of `list()` with its bodies
 * (404 when it is not there). Returns accessors for what it saw.
 */
export function script(
  server: ScriptedServer,
  posts: PostStep[],
  list: () => unknown[] = () => [],
): { posts: () => ReceivedRequest[]; gets: () => ReceivedRequest[]; order: () => string[] } {
  let n = 0;
  server.handle((req, res: ServerResponse) => {
    if (req.method === 'GET') {
      const id = /^\/emails\/(\d+)$/.exec(req.url)?.[1];
      if (id === undefined) return json(res, 200, list());
      const record = list().find((r) => (r as { id: number }).id === Number(id)) as Record<string, unknown>;
      if (record === undefined) return json(res, 404, { error: 'not found' });
      return json(res, 200, { html: null, bodyText: null, ...record });
    }
    const step = posts[Math.min(n++, posts.length - 1)];
    if (step === 'reset') return void req.socket.destroy();
    if (step === 'hang') return;
    const { status, headers, body } =
      typeof step === 'number' ? { status: step, headers: {}, body: undefined } : step;
    const ok = status >= 200 && status < 300;
    const batch = req.url.endsWith('/batch');
    const answer =
      body ?? (ok ? (batch ? { data: [recordFor(100)] } : recordFor(100)) : { error: `scripted ${status}` });
    json(res, status, answer, headers ?? {});
  });
  return {
    posts: () => server.requests.filter((r) => r.method === 'POST'),
    gets: () => server.requests.filter((r) => r.method === 'GET'),
    order: () => server.requests.map((r) => `${r.method} ${r.url}`),
  };
}

/** Awaits a promise that must reject and returns what it rejected with. */
export async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => {
      throw new Error(`expected a failure, got ${JSON.stringify(value)}`);
    },
    (err: unknown) => err,
  );
}
