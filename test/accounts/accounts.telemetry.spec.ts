/**
 * Issue 35: the account id on spans and metrics only with `telemetry: { accountAttribute: true }`, and no
 * account's key in any exported attribute either way (real SDK, in-memory exporters, the sandbox on loopback).
 */
import { EmailSandbox, type SandboxMailbox } from '../../lib/testing/index.js';
import { emailApp } from '../support/email-app.js';
import { attributeTexts, registerMemoryOtel, type MemoryOtel } from '../telemetry/otel.support.js';

let otel: MemoryOtel;
let sandbox: EmailSandbox;
let acme: SandboxMailbox;
beforeAll(async () => {
  otel = registerMemoryOtel();
  sandbox = await EmailSandbox.start({ ref: false });
  acme = sandbox.mailbox({ name: 'acme' });
});
afterAll(async () => {
  await sandbox.close();
  await otel.shutdown();
});
beforeEach(() => otel.reset());

const mail = { from: 'shop@example.com', to: ['ada@example.org'], subject: 'Hi', text: 'Hello' };

async function sendWith(telemetry: boolean | { accountAttribute?: boolean }, account = 'acme') {
  const { email, close } = await emailApp({
    apiKey: undefined,
    baseUrl: sandbox.baseUrl,
    telemetry,
    accounts: (id) => (id === account ? { apiKey: acme.apiKey } : null),
  });
  try {
    await email.send(mail, { account });
    await email.list({ account });
  } finally {
    await close();
  }
  return otel.spans().filter((s) => s.name.startsWith('email.'));
}

it('puts the account id on spans and metrics with accountAttribute: true', async () => {
  const spans = await sendWith({ accountAttribute: true });
  expect(spans.map((s) => s.name).sort()).toEqual(['email.list', 'email.send']);
  for (const s of spans) expect(s.attributes['email.account.id']).toBe('acme');
  const points = await otel.points('email.client.sends');
  expect(points.some((p) => p.attributes['email.account.id'] === 'acme')).toBe(true);
  for (const text of spans.flatMap(attributeTexts)) expect(text).not.toContain(acme.apiKey);
});

it('leaves it out by default', async () => {
  const spans = await sendWith(true, 'globex');
  expect(spans).toHaveLength(2);
  for (const s of spans) expect(s.attributes['email.account.id']).toBeUndefined();
  const points = await otel.points('email.client.sends');
  expect(points.length).toBeGreaterThan(0);
  // metrics are cumulative over the file: no point names this test's account
  for (const p of points) expect(p.attributes['email.account.id']).not.toBe('globex');
});
