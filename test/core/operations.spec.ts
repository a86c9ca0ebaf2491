import { PACKAGE_VERSION } from '../../lib/config/email.constants.js';
import { TEST_API_KEY, useScriptedEmailApp } from '../support/email-app.js';
import { emailDetailJson, emailLogJson } from '../support/records.fixture.js';
import { json } from '../support/scripted-server.js';
import { readFileSync } from 'node:fs';

describe('EmailService operations over HTTP', () => {
  const app = useScriptedEmailApp({ path: '/api/v1/' });

  const commonHeaders = (i = 0) => {
    const h = app.server.requests[i].headers;
    expect(h.authorization).toBe(`Bearer ${TEST_API_KEY}`);
    expect(h.accept).toBe('application/json');
    expect(h['user-agent']).toMatch(
      new RegExp(`^nestjs-transactional-email/${PACKAGE_VERSION.replace(/\./g, '\\.')} `),
    );
    return h;
  };

  it('send: POST {prefix}/emails with the JSON body and an Idempotency-Key', async () => {
    app.server.handle((_req, res) => json(res, 201, emailLogJson({ id: 42, status: 'scheduled' })));
    const scheduledAt = new Date('2026-11-30T10:00:00.000Z');
    const input = {
      from: 'app@example.com',
      to: ['ada@example.com'],
      subject: 'Hi',
      text: 'Hello',
      scheduledAt,
    };
    const record = await app.email.send(input);
    expect(app.server.requests).toHaveLength(1);
    const req = app.server.requests[0];
    expect(req.method).toBe('POST');
    expect(req.url).toBe('/api/v1/emails');
    const h = commonHeaders();
    expect(h['content-type']).toBe('application/json');
    expect(h['idempotency-key']).toMatch(/^[-A-Za-z0-9_:]{16,128}$/);
    expect(JSON.parse(req.body)).toEqual({ ...input, scheduledAt: '2026-11-30T10:00:00.000Z' });
    expect(record.id).toBe(42);
    expect(record.status).toBe('scheduled');
    expect(record.createdAt).toBeInstanceOf(Date);
    expect(record.createdAt.toISOString()).toBe('2026-11-22T08:00:00.000Z');
    expect(record.scheduledAt).toBeNull();
  });

  it('send: uses the caller key as given, and a fresh generated key per call otherwise', async () => {
    app.server.handle((_req, res) => json(res, 201, emailLogJson()));
    const input = { from: 'app@example.com', to: ['ada@example.com'], subject: 'Hi', text: 'Hello' };
    await app.email.send(input, { idempotencyKey: 'job:1234:welcome-email' });
    await app.email.send(input);
    await app.email.send(input);
    const keys = app.server.requests.map((r) => r.headers['idempotency-key']);
    expect(keys[0]).toBe('job:1234:welcome-email');
    expect(keys[1]).not.toBe(keys[2]);
  });

  it('sendBatch: POST {prefix}/emails/batch with the array and no Idempotency-Key', async () => {
    app.server.handle((_req, res) =>
      json(res, 201, { data: [emailLogJson({ id: 1 }), emailLogJson({ id: 2 })] }),
    );
    const items = [
      { from: 'app@example.com', to: ['a@example.com'], subject: 'A', html: '<b>A</b>' },
      { from: 'app@example.com', to: ['b@example.com'], templateId: 7, variables: { name: 'B' } },
    ];
    const records = await app.email.sendBatch(items);
    const req = app.server.requests[0];
    expect(req.method).toBe('POST');
    expect(req.url).toBe('/api/v1/emails/batch');
    expect(commonHeaders()['idempotency-key']).toBeUndefined();
    expect(JSON.parse(req.body)).toEqual(items);
    expect(records.map((r) => r.id)).toEqual([1, 2]);
  });

  it('list: GET {prefix}/emails with and without limit', async () => {
    app.server.handle((_req, res) => json(res, 200, [emailLogJson({ id: 3 }), emailLogJson({ id: 2 })]));
    const all = await app.email.list();
    const some = await app.email.list({ limit: 1 });
    expect(app.server.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      'GET /api/v1/emails',
      'GET /api/v1/emails?limit=1',
    ]);
    expect(app.server.requests[0].body).toBe('');
    expect(app.server.requests[0].headers['content-type']).toBeUndefined();
    expect(app.server.requests[0].headers['idempotency-key']).toBeUndefined();
    commonHeaders(1);
    expect(all.map((r) => r.id)).toEqual([3, 2]);
    expect(some).toHaveLength(2);
  });

  it('get: GET {prefix}/emails/{id} returns the detail with bodies', async () => {
    app.server.handle((_req, res) =>
      json(res, 200, emailDetailJson({ id: 9, html: null, bodyText: 'plain' })),
    );
    const detail = await app.email.get(9);
    expect(`${app.server.requests[0].method} ${app.server.requests[0].url}`).toBe('GET /api/v1/emails/9');
    commonHeaders();
    expect(detail).toMatchObject({ id: 9, html: null, bodyText: 'plain' });
  });

  it('listEvents: GET {prefix}/emails/{id}/events returns typed events', async () => {
    app.server.handle((_req, res) =>
      json(res, 200, [
        { id: 2, type: 'click', url: 'https://example.com/x', occurredAt: '2026-11-22T09:00:00Z' },
        { id: 1, type: 'open', url: null, occurredAt: '2026-11-22T08:59:00Z' },
      ]),
    );
    const events = await app.email.listEvents(5);
    expect(`${app.server.requests[0].method} ${app.server.requests[0].url}`).toBe(
      'GET /api/v1/emails/5/events',
    );
    expect(events[0]).toEqual({
      id: 2,
      type: 'click',
      url: 'https://example.com/x',
      occurredAt: new Date('2026-11-22T09:00:00Z'),
    });
    expect(events[1].url).toBeNull();
  });

  it('extra fields in a response are tolerated and not passed through', async () => {
    app.server.handle((_req, res) => json(res, 200, emailDetailJson({ somethingNew: 1 })));
    const detail = await app.email.get(1);
    expect(detail).not.toHaveProperty('somethingNew');
    expect(detail.fromAddress).toBe('app@example.com');
  });

  it('rejects bad per-call arguments before any request', async () => {
    await expect(app.email.list({ limit: 0 })).rejects.toMatchObject({ name: 'EmailValidationError' });
    await expect(app.email.list({ limit: 101 })).rejects.toThrow(/limit: must be an integer from 1 to 100/);
    await expect(app.email.get(1.5)).rejects.toThrow(/id: must be an integer/);
    await expect(app.email.listEvents(Number.NaN)).rejects.toThrow(/id: must be an integer/);
    await expect(
      app.email.send(
        { from: 'a@example.com', to: ['b@example.com'], subject: 's', text: 't' },
        { idempotencyKey: 'short' },
      ),
    ).rejects.toThrow(/idempotencyKey: must be 16 to 128 characters/);
    await expect(app.email.list({ timeoutMs: -1 })).rejects.toThrow(/timeoutMs: must be a positive number/);
    expect(app.server.requests).toHaveLength(0);
  });

  it('PACKAGE_VERSION matches package.json', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    expect(PACKAGE_VERSION).toBe(pkg.version);
  });
});

describe('defaultFrom and idempotency off', () => {
  const app = useScriptedEmailApp({
    handler: (req, res) =>
      json(res, 201, req.url.endsWith('/batch') ? { data: [emailLogJson()] } : emailLogJson()),
    defaultFrom: 'Acme <noreply@example.com>',
    idempotency: 'off',
  });

  it('fills from with defaultFrom and sends no key when idempotency is off', async () => {
    const { email, server } = app;
    await email.send({ to: ['ada@example.com'], subject: 'Hi', text: 'Hello' });
    await email.sendBatch([{ to: ['ada@example.com'], subject: 'Hi', text: 'Hello' }]);
    expect(server.requests[0].url).toBe('/emails');
    expect(JSON.parse(server.requests[0].body).from).toBe('Acme <noreply@example.com>');
    expect(server.requests[0].headers['idempotency-key']).toBeUndefined();
    expect(JSON.parse(server.requests[1].body)[0].from).toBe('Acme <noreply@example.com>');
  });
});

describe('bad call arguments are named, never a TypeError', () => {
  const app = useScriptedEmailApp({ handler: (_req, res) => json(res, 200, [emailLogJson()]) });

  it('null options, a string id, a non-array batch', async () => {
    const { email, server } = app;
    await expect(email.list(null)).resolves.toHaveLength(1);
    await expect(email.get('5' as unknown as number)).rejects.toThrow('id: must be an integer (got "5")');
    await expect(email.sendBatch(null as never)).rejects.toThrow('must be an array of 1 to 100 emails');
    const input = { from: 'app@example.com', to: ['ada@example.com'], subject: 'Hi', text: 'Hello' };
    server.handle((_req, res) => json(res, 201, emailLogJson()));
    await expect(email.send(input, null)).resolves.toMatchObject({ id: 1 });
    expect(server.requests.map((r) => r.method)).toEqual(['GET', 'POST']);
  });
});
