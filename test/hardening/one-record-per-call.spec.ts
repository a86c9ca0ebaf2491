import type { ServerResponse } from 'node:http';
import { EmailSendUncertainError, type EmailLog, type EmailService } from '../../lib/index.js';
import { emailApp } from '../support/email-app.js';
import { emailLogJson } from '../support/records.fixture.js';
import {
  json,
  startScriptedServer,
  type ReceivedRequest,
  type ScriptedServer,
} from '../support/scripted-server.js';

/**
 * Issue 12, defect 4: two identical sends in flight (each with its own key). The first is created
 * and answered slowly; the second is created and answered 500, so it looks itself up. The look-up
 * must not take the first call's record: within one process a record serves one call.
 */
const input = { from: 'app@example.com', to: ['ada@example.com'], subject: 'Twice', text: 'Same body' };

/** `GET /emails` (the list) or `GET /emails/{id}` (that record with the input's body), from `created`. */
function answerRead(req: ReceivedRequest, res: ServerResponse, created: Record<string, unknown>[]): void {
  const id = /^\/emails\/(\d+)$/.exec(req.url)?.[1];
  if (id === undefined) return json(res, 200, created);
  const record = created.find((r) => r.id === Number(id));
  if (!record) return json(res, 404, { error: 'not found' });
  json(res, 200, { ...record, html: null, bodyText: input.text });
}

/**
 * A service that creates a record for each new key (a repeated key replays its record), answers the
 * first send after `slowMs` and the second with 500, and lists every record it created.
 */
function scriptTwoSends(server: ScriptedServer, slowMs: number): { created: Record<string, unknown>[] } {
  const created: Record<string, unknown>[] = [];
  const byKey = new Map<string, Record<string, unknown>>();
  const timers: NodeJS.Timeout[] = [];
  server.handle((req: ReceivedRequest, res: ServerResponse) => {
    if (req.method === 'GET') return answerRead(req, res, created);
    const key = String(req.headers['idempotency-key']);
    const replay = byKey.get(key);
    if (replay) return json(res, 201, replay);
    const at = new Date(Date.now() + created.length).toISOString(); // strictly increasing creation times
    const record = emailLogJson({
      id: created.length + 1,
      fromAddress: input.from,
      toAddresses: input.to,
      subject: input.subject,
      createdAt: at,
      updatedAt: at,
    });
    created.push(record);
    byKey.set(key, record);
    if (record.id === 1) timers.push(setTimeout(() => json(res, 201, record), slowMs));
    else json(res, 500, { error: 'scripted 500 after creating the message' });
  });
  server.server.on('close', () => timers.forEach(clearTimeout));
  return { created };
}

async function untilPosts(server: ScriptedServer, n: number): Promise<void> {
  for (let i = 0; i < 200 && server.requests.filter((r) => r.method === 'POST').length < n; i++) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const count = (server: ScriptedServer, method: string): number =>
  server.requests.filter((r) => r.method === method).length;

describe('one record per call (issue 12, defect 4)', () => {
  let server: ScriptedServer;
  let email: EmailService;
  let close: () => Promise<void>;
  afterEach(async () => {
    await close();
    await server.close();
  });

  async function start(timeoutMs: number): Promise<void> {
    server = await startScriptedServer();
    ({ email, close } = await emailApp({ baseUrl: server.url, timeoutMs, maxRetries: 2 }));
  }

  it("the 500 call gets its own record back by its key, never the slow identical call's", async () => {
    await start(5_000);
    scriptTwoSends(server, 300);
    const first = email.send(input);
    await untilPosts(server, 1);
    const second = email.send(input);
    const [a, b] = (await Promise.all([first, second])) as [EmailLog, EmailLog];
    expect(a.id).toBe(1);
    expect(b.id).toBe(2);
    expect(count(server, 'POST')).toBe(3); // the 500 call's retry with its key replays record 2
    expect(count(server, 'GET')).toBe(0);
  });

  it('with no retry left, the look-up waits for the slow identical call; when that outlasts it, uncertain instead of taking it', async () => {
    await start(600);
    scriptTwoSends(server, 1_200);
    const first = email.send(input, { timeoutMs: 5_000 });
    await untilPosts(server, 1);
    const error = await email.send(input, { maxRetries: 0 }).then(
      (r) => r,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(EmailSendUncertainError);
    expect((await first).id).toBe(1);
    expect(count(server, 'POST')).toBe(2);
    expect(count(server, 'GET')).toBe(0); // no look-up could run while record 1 might still be claimed
  });

  it('identical sends that all fail uncertain each get their own record: the key replays it, no look-alike is taken', async () => {
    await start(5_000);
    const created: Record<string, unknown>[] = [];
    const byKey = new Map<string, Record<string, unknown>>();
    server.handle((req, res) => {
      if (req.method === 'GET') return answerRead(req, res, created);
      const key = String(req.headers['idempotency-key']);
      const replay = byKey.get(key);
      if (replay) return json(res, 201, replay);
      const at = new Date(Date.now() + created.length).toISOString();
      created.push(
        emailLogJson({
          id: created.length + 1,
          fromAddress: input.from,
          toAddresses: input.to,
          subject: input.subject,
          createdAt: at,
          updatedAt: at,
        }),
      );
      byKey.set(key, created[created.length - 1]);
      json(res, 503, { error: 'scripted 503 after creating the message' });
    });
    const keys = ['identical-send-key-1', 'identical-send-key-2', 'identical-send-key-3'];
    const results = await Promise.all(keys.map((idempotencyKey) => email.send(input, { idempotencyKey })));
    // Each call's record is the one its own key created: three look-alikes with the same content prove nothing.
    expect(results.map((r) => r.id)).toEqual(keys.map((k) => byKey.get(k)?.id));
    expect(new Set(results.map((r) => r.id)).size).toBe(3);
    expect(created).toHaveLength(3);
  });
});
