import {
  EmailSuppressedError,
  EmailSuppressions,
  EmailValidationError,
  type EmailService,
} from '../../lib/index.js';
import type { TestingModule } from '@nestjs/testing';
import { emailApp, type EmailAppOptions } from '../support/email-app.js';
import { useMailbox, useSandbox } from '../support/sandbox.js';

// The gate over the sandbox, in memory (one process): a suppressed address never reaches the service (its
// request log holds no request naming it), through send, sendBatch and sendMany; the module learns from the
// records it reads; remove and expiry let the address through again.

const sandbox = useSandbox();
const mailbox = useMailbox(sandbox, { domains: ['shop.test'] });

const FROM = 'Shop <orders@shop.test>';
const mail = (to: string[], subject = 'Your order') => ({ from: FROM, to, subject, text: 'Thanks' });

/** Every request body the mailbox received, as text (addresses lower-cased). */
const requested = (): string =>
  mailbox
    .requests()
    .map((r) => (r.body ?? '').toLowerCase())
    .join('\n');

async function app(options: EmailAppOptions = {}): Promise<{
  email: EmailService;
  suppressions: EmailSuppressions;
  moduleRef: TestingModule;
  close: () => Promise<void>;
}> {
  const built = await emailApp({ sandbox: mailbox, ...options });
  return { ...built, suppressions: built.moduleRef.get(EmailSuppressions) };
}

describe('the suppression gate on the sandbox (memory store)', () => {
  it('refuses a send to a suppressed address before any request, naming it and its reason', async () => {
    const { email, suppressions, close } = await app();
    try {
      await suppressions.add('Gone@Example.com', { reason: 'bounced' });
      const before = mailbox.requests().length;
      const err = await email.send(mail(['Ada <gone@example.COM>'])).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(EmailSuppressedError);
      expect(err).toMatchObject({
        outcome: 'not-sent',
        retryable: false,
        addresses: [{ address: 'Ada <gone@example.COM>', reason: 'bounced' }],
      });
      expect((err as Error).message).not.toContain('gone@');
      expect(mailbox.requests()).toHaveLength(before);
      await expect(email.send(mail(['kept@example.com']))).resolves.toMatchObject({ status: 'sent' });
      expect(requested()).not.toContain('gone@example.com');
    } finally {
      await close();
    }
  });

  it('refuses a batch with a suppressed recipient whole, and sendMany answers only that item not-sent', async () => {
    const { email, suppressions, close } = await app();
    try {
      await suppressions.add(['spam@example.com'], { reason: 'complained' });
      const items = [mail(['a@example.com']), mail(['spam@example.com']), mail(['b@example.com'])];
      const err = await email.sendBatch(items).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(EmailSuppressedError);
      expect(err).toMatchObject({
        items: [1],
        addresses: [{ address: 'spam@example.com', reason: 'complained' }],
      });
      expect(mailbox.requests()).toHaveLength(0);
      const results = await email.sendMany(items);
      expect(results.map((r) => r.status)).toEqual(['sent', 'not-sent', 'sent']);
      expect(results[1]).toMatchObject({ index: 1, error: expect.any(EmailSuppressedError) });
      expect(mailbox.messages().map((m) => m.toAddresses)).toEqual([['a@example.com'], ['b@example.com']]);
      expect(requested()).not.toContain('spam@example.com');
    } finally {
      await close();
    }
  });

  it("with partial: 'send-to-rest', sends to the recipients left, and refuses only when none is", async () => {
    const { email, suppressions, close } = await app({ suppression: { partial: 'send-to-rest' } });
    try {
      await suppressions.add('gone@example.com', { reason: 'bounced' });
      const sent = await email.send(mail(['ada@example.com', 'gone@example.com', 'bob@example.com']));
      expect(sent.toAddresses).toEqual(['ada@example.com', 'bob@example.com']);
      await expect(email.send(mail(['gone@example.com']))).rejects.toBeInstanceOf(EmailSuppressedError);
      expect(requested()).not.toContain('gone@example.com');
    } finally {
      await close();
    }
  });

  it('learns from a record it reads whose status is bounced, then refuses the next send to it', async () => {
    const { email, suppressions, close } = await app();
    try {
      mailbox.bounce('bouncy@example.com');
      const first = await email.send(mail(['bouncy@example.com']));
      expect(first.status).toBe('sent'); // as a provider answers; the record says bounced afterwards
      expect((await email.get(first.id)).status).toBe('bounced');
      await waitFor(async () => (await suppressions.check('bouncy@example.com')).length === 1);
      expect(await suppressions.check('BOUNCY@example.com')).toEqual([
        expect.objectContaining({ address: 'bouncy@example.com', reason: 'bounced' }),
      ]);
      const requests = mailbox.requests().length;
      await expect(email.send(mail(['bouncy@example.com']))).rejects.toBeInstanceOf(EmailSuppressedError);
      expect(mailbox.requests()).toHaveLength(requests);
      await expect(email.send(mail(['other@example.com']))).resolves.toMatchObject({ status: 'sent' });
    } finally {
      await close();
    }
  });

  it('lets an address through again after remove, and does not learn it again from the old record', async () => {
    const { email, suppressions, close } = await app();
    try {
      mailbox.complain('spam@example.com');
      const { id } = await email.send(mail(['spam@example.com']));
      await email.list();
      await waitFor(async () => (await suppressions.check('spam@example.com')).length === 1);
      expect(await suppressions.remove('spam@example.com')).toBe(1);
      mailbox.clearBounce('spam@example.com');
      expect((await email.get(id)).status).toBe('complained'); // the old record, read again
      await email.list();
      await expect(email.send(mail(['spam@example.com']))).resolves.toMatchObject({ status: 'sent' });
      expect(await suppressions.check('spam@example.com')).toEqual([]);
    } finally {
      await close();
    }
  });

  it('lets an address through once its entry expired', async () => {
    const { email, suppressions, close } = await app();
    try {
      const expiresAt = new Date(Date.now() + 300);
      await suppressions.add('later@example.com', { reason: 'manual', expiresAt });
      await expect(email.send(mail(['later@example.com']))).rejects.toBeInstanceOf(EmailSuppressedError);
      await waitFor(async () => Date.now() > expiresAt.getTime());
      await expect(email.send(mail(['later@example.com']))).resolves.toMatchObject({ status: 'sent' });
    } finally {
      await close();
    }
  });

  it('keeps each account its own list; the module-wide list applies to every account', async () => {
    const other = await sandbox.mailbox({ domains: ['shop.test'] });
    const accounts = { resolve: (id: string) => ({ apiKey: id === 'a' ? mailbox.apiKey : other.apiKey }) };
    const { email, suppressions, close } = await app({ accounts });
    try {
      await suppressions.add('x@example.com', { reason: 'bounced', account: 'a' });
      await expect(email.send(mail(['x@example.com']), { account: 'a' })).rejects.toBeInstanceOf(
        EmailSuppressedError,
      );
      await expect(email.send(mail(['x@example.com']), { account: 'b' })).resolves.toMatchObject({
        status: 'sent',
      });
      await expect(email.send(mail(['x@example.com']))).resolves.toMatchObject({ status: 'sent' });
      await suppressions.add('all@example.com', { reason: 'manual', allAccounts: true });
      for (const account of ['a', 'b', undefined]) {
        await expect(
          email.send(mail(['all@example.com']), account ? { account } : {}),
        ).rejects.toBeInstanceOf(EmailSuppressedError);
      }
      expect((await suppressions.list({ account: 'a' })).entries.map((e) => e.address)).toEqual([
        'x@example.com',
      ]);
      expect((await suppressions.list({ account: 'b' })).entries).toEqual([]);
      expect((await suppressions.list({ allAccounts: true })).entries).toEqual([
        expect.objectContaining({ address: 'all@example.com', allAccounts: true }),
      ]);
    } finally {
      await close();
      await other.close();
    }
  });

  it('refuses bad input with one validation error naming each problem', async () => {
    const { suppressions, close } = await app();
    try {
      const err = await suppressions
        .add(['not an address', 'ok@example.com'], {
          reason: 'lost' as never,
          account: 'a',
          allAccounts: true,
        })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(EmailValidationError);
      expect((err as EmailValidationError).issues.map((i) => i.path).sort()).toEqual([
        'account',
        'address[0]',
        'reason',
      ]);
    } finally {
      await close();
    }
  });
});

/** Polls `done` until it holds (the test's timeout bounds it). */
async function waitFor(done: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await done())) await new Promise((r) => setTimeout(r, 20));
}
