/**
 * The sample's tenants (issue 35), started as `main.ts` starts the sample (embedded sandbox and Redis) and
 * driven over real HTTP: each tenant sends under its own account (its key, sender and sandbox mailbox)
 * through the queue, the sample's own email keeps the module's key, an unknown tenant is answered 404 with
 * nothing queued, and a 429 on one tenant's mailbox holds that tenant's job alone.
 */
import type { INestApplication } from '@nestjs/common';
import type { AddressInfo } from 'node:net';
import type { EmailSandbox, SandboxMailbox } from 'nestjs-transactional-email/testing';
import { createSampleApp } from '../../sample/src/app.setup.js';
import { startLocalRedis, type LocalRedis } from '../../sample/src/redis/local-redis.js';
import { startLocalSandbox } from '../../sample/src/sandbox/local-sandbox.js';
import { TENANT_MAILBOXES } from '../../sample/src/tenants/tenants.constants.js';
import { httpClient, waitFor } from './sample.http.js';

const saved = { ...process.env };

let app: INestApplication;
let sandbox: EmailSandbox;
let redis: LocalRedis | null;
let mailboxes: Map<string, SandboxMailbox>;
let call: ReturnType<typeof httpClient>;

beforeAll(async () => {
  delete process.env.EMAIL_BASE_URL;
  delete process.env.EMAIL_API_KEY;
  delete process.env.REDIS_URL;
  Object.assign(process.env, { NOTIFICATION_RETRY_MS: '100', NOTIFICATION_MAX_ATTEMPTS: '50' });
  redis = await startLocalRedis();
  const started = await startLocalSandbox();
  if (!started) throw new Error('the sample should start an embedded sandbox without EMAIL_BASE_URL');
  sandbox = started;
  app = await createSampleApp({ sandbox, logger: false });
  await app.listen(0, '127.0.0.1');
  mailboxes = app.get(TENANT_MAILBOXES, { strict: false });
  call = httpClient(`http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`);
});

afterAll(async () => {
  await app?.close();
  await redis?.stop();
  process.env = saved;
});

const mail = (to: string, subject = 'Hello') => ({ to, subject, text: 'Hello there.' });
const job = (tenant: string, id: string) => call('GET', `/tenants/${tenant}/jobs/${id}`);
const settled = (tenant: string, id: string, states: string[], timeoutMs?: number) =>
  waitFor(
    async () => {
      const res = await job(tenant, id);
      return states.includes(res.body.state) ? res.body : undefined;
    },
    `job ${id} to be ${states.join(' or ')}`,
    timeoutMs,
  );
const sentTo = (box: SandboxMailbox, address: string) =>
  box.messages().filter((m) => m.toAddresses.includes(address));

it('lists the tenants with their senders, never a key', async () => {
  const res = await call('GET', '/tenants');
  expect(res.status).toBe(200);
  expect(res.body.map((t: { id: string }) => t.id)).toEqual(['acme', 'globex', 'initech']);
  expect(res.body[0]).toMatchObject({ id: 'acme', sender: 'Acme <orders@acme.example.com>' });
  const text = JSON.stringify(res.body);
  for (const box of mailboxes.values()) expect(text).not.toContain(box.apiKey);
});

it("sends each tenant's email with its own key, from its sender, into its own mailbox only", async () => {
  const a = await call('POST', '/tenants/acme/emails', mail('wile@example.com'));
  const g = await call('POST', '/tenants/globex/emails', mail('hank@example.com'));
  expect([a.status, g.status]).toEqual([202, 202]);
  expect(a.body.id).toMatch(/^acme-/);
  expect(await settled('acme', a.body.id, ['sent', 'failed'])).toMatchObject({ state: 'sent', attempts: 1 });
  expect(await settled('globex', g.body.id, ['sent', 'failed'])).toMatchObject({ state: 'sent' });

  const acme = mailboxes.get('acme')!;
  const globex = mailboxes.get('globex')!;
  expect(sentTo(acme, 'wile@example.com')).toEqual([
    expect.objectContaining({ fromAddress: 'Acme <orders@acme.example.com>' }),
  ]);
  expect(sentTo(globex, 'hank@example.com')).toEqual([
    expect.objectContaining({ fromAddress: 'Globex <hello@globex.example.com>' }),
  ]);
  expect(sentTo(acme, 'hank@example.com')).toEqual([]);
  expect(sandbox.messages().filter((m) => /wile|hank/.test(m.toAddresses.join()))).toEqual([]);

  // The tenant's log as the service shows it to the tenant's key.
  const log = await call('GET', '/tenants/globex/emails');
  expect(log.status).toBe(200);
  expect(log.body.map((m: { toAddresses: string[] }) => m.toAddresses)).toEqual([['hank@example.com']]);
});

it("keeps the sample's own email on the module's key", async () => {
  const res = await call('POST', '/emails', {
    from: 'hello@example.com',
    to: ['own@example.com'],
    subject: 'Own',
    text: 'Sent for the sample itself.',
  });
  expect(res.status).toBe(201);
  expect(sandbox.messages().filter((m) => m.toAddresses.includes('own@example.com'))).toHaveLength(1);
  for (const box of mailboxes.values()) expect(sentTo(box, 'own@example.com')).toEqual([]);
});

it('answers 404 for an unknown tenant, before anything is queued or sent', async () => {
  const before = await call('GET', '/notifications/jobs');
  expect((await call('POST', '/tenants/hooli/emails', mail('gavin@example.com'))).status).toBe(404);
  expect((await call('GET', '/tenants/hooli/emails')).status).toBe(404);
  expect((await call('GET', '/tenants/hooli/jobs/hooli-1')).status).toBe(404);
  expect((await call('POST', '/sandbox/tenants/hooli/faults', { mode: 'drop-after' })).status).toBe(404);
  const after = await call('GET', '/notifications/jobs');
  expect(after.body).toHaveLength(before.body.length);
});

it("answers 404 for another tenant's job, and 400 for a bad body", async () => {
  const a = await call('POST', '/tenants/acme/emails', mail('road@example.com'));
  expect((await job('globex', a.body.id)).status).toBe(404);
  expect((await job('acme', a.body.id)).status).toBe(200);
  expect(
    (await call('POST', '/tenants/acme/emails', { to: 'not an address', subject: 'x', text: 'y' })).status,
  ).toBe(400);
  expect((await call('POST', '/tenants/acme/emails', { to: 'x@example.com' })).status).toBe(400);
});

it("holds a tenant's job while its mailbox answers 429, without an attempt; the others' jobs go out", async () => {
  const initech = mailboxes.get('initech')!;
  const fault = await call('POST', '/sandbox/tenants/initech/faults', {
    route: 'POST /emails',
    mode: 'status',
    status: 429,
    retryAfter: 1,
    times: 1000,
  });
  expect(fault.body).toMatchObject({ status: 429, retryAfter: 1, times: 1000 });

  const held = await call('POST', '/tenants/initech/emails', mail('peter@example.com'));
  await waitFor(
    async () => (initech.requests().some((r) => r.status === 429) ? true : undefined),
    "initech's 429",
  );
  const other = await call('POST', '/tenants/globex/emails', mail('lumbergh@example.com'));
  expect(await settled('globex', other.body.id, ['sent', 'failed'])).toMatchObject({ state: 'sent' });

  // Every send of initech is still refused: its job is not sent, and no refused attempt was counted.
  const waiting = await settled('initech', held.body.id, ['delayed']);
  expect(waiting).toMatchObject({ attempts: 0 });
  expect(sentTo(initech, 'peter@example.com')).toEqual([]);
  expect(initech.requests().every((r) => r.status === 429)).toBe(true);
  expect(sandbox.faults.counts()).not.toHaveProperty('status');

  expect((await call('DELETE', '/sandbox/tenants/initech/faults')).status).toBe(204);
  const sent = await settled('initech', held.body.id, ['sent', 'failed'], 30_000);
  expect(sent).toMatchObject({ state: 'sent', attempts: 1 });
  expect(sentTo(initech, 'peter@example.com')).toHaveLength(1);
}, 60_000);
