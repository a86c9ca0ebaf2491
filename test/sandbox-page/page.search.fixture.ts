import { EmailSandbox } from '../../lib/testing/index.js';
import { inline, RawClient } from '../sandbox/sandbox.client.js';

/** Two accounts' keys of one sandbox (`account` named), so that `account:` has something to tell apart. */
export const ACME_KEY = 'sk_test_search_acme_0001';
export const GLOBEX_KEY = 'sk_test_search_globex_0001';

/** A sandbox whose clock stands still (each message is made at a time of the fixture's choosing). */
export function startSearchSandbox(): Promise<EmailSandbox> {
  return EmailSandbox.start({
    keys: [
      { key: ACME_KEY, account: 'acme' },
      { key: GLOBEX_KEY, account: 'globex' },
    ],
    clock: { start: '2026-11-20T00:00:00Z', frozen: true },
  });
}

/**
 * Five look-alike messages (two senders, repeated recipients and subjects, different bodies), made at
 * known times, from two accounts; one with a file, one from a template, two tagged by job, one bounced,
 * one read. Subjects, oldest first: A "Your invoice" (read), B "Your invoice", C "Reset link inside",
 * D "Welcome, Ada", E "Order 42 shipped".
 */
export async function stageSearch(sandbox: EmailSandbox, client: RawClient): Promise<void> {
  const at = async (iso: string, key: string, body: Record<string, unknown>) => {
    sandbox.clock.set(iso);
    const res = await client.send(body, { key });
    if (res.status !== 201) throw new Error(`send failed: ${res.status} ${res.text}`);
    return res.json.id as number;
  };
  const billing = 'Billing <billing@example.com>';
  const a = await at(
    '2026-11-21T12:00:00Z',
    ACME_KEY,
    inline({ from: billing, to: ['ada@example.org'], subject: 'Your invoice', text: 'Amount due 42' }),
  );
  await at(
    '2026-11-22T20:00:00Z',
    GLOBEX_KEY,
    inline({
      from: billing,
      to: ['bob@example.org'],
      subject: 'Your invoice',
      text: 'Amount due 7',
      attachments: [{ filename: 'invoice.pdf', content: Buffer.from('%PDF-1.4').toString('base64') }],
    }),
  );
  await at(
    '2026-11-23T09:00:00Z',
    ACME_KEY,
    inline({ to: ['ada@example.org'], subject: 'Reset link inside', text: 'Use the reset link to sign in' }),
  );
  const d = await at('2026-11-24T09:00:00Z', GLOBEX_KEY, {
    from: 'orders@example.com',
    to: ['ada@example.org'],
    templateId: 1,
    variables: { name: 'Ada' },
  });
  const e = await at(
    '2026-11-24T10:00:00Z',
    ACME_KEY,
    inline({ to: ['carol@example.org'], subject: 'Order 42 shipped', text: 'Your order 42 is on its way' }),
  );
  sandbox.tag(d, 'job:welcome-42');
  sandbox.tag(e, 'job:ship-42', 'carrier');
  sandbox.setStatus(e, 'bounced', 'mailbox unavailable');
  const read = await client.call('POST', '/__sandbox/outbox/api/messages/read', {
    key: null,
    body: { ids: [a] },
  });
  if (read.status !== 200) throw new Error(`mark read failed: ${read.status}`);
}

/** Each search word of the page with the subjects it lists, newest first, read in UTC. */
export const WORDS: ReadonlyArray<[string, string[]]> = [
  ['from:billing', ['Your invoice', 'Your invoice']],
  ['to:ada', ['Welcome, Ada', 'Reset link inside', 'Your invoice']],
  ['subject:"reset link"', ['Reset link inside']],
  ['"order 42"', ['Order 42 shipped']],
  ['is:read', ['Your invoice']],
  ['is:unread', ['Order 42 shipped', 'Welcome, Ada', 'Reset link inside', 'Your invoice']],
  ['has:attachment', ['Your invoice']],
  ['before:2026-11-23', ['Your invoice', 'Your invoice']],
  ['after:2026-11-24', ['Order 42 shipped', 'Welcome, Ada']],
  ['after:2026-11-22 before:2026-11-24', ['Reset link inside', 'Your invoice']],
  ['-from:billing', ['Order 42 shipped', 'Welcome, Ada', 'Reset link inside']],
  ['status:bounced', ['Order 42 shipped']],
  ['account:acme', ['Order 42 shipped', 'Reset link inside', 'Your invoice']],
  ['template:1', ['Welcome, Ada']],
  ['job:welcome-42', ['Welcome, Ada']],
  ['tag:carrier', ['Order 42 shipped']],
  ['from:billing -has:attachment', ['Your invoice']],
];
