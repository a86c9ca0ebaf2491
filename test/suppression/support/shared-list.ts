import { EmailError, EmailSuppressedError, type EmailInput, type EmailService } from '../../../lib/index.js';
import type { EmailSuppressions } from '../../../lib/index.js';
import type { SuppressionGate } from '../../../lib/suppression/suppression.engine.js';
import type { SandboxMailbox } from '../../../lib/testing/index.js';
import { until } from '../../support/worker-process.js';
import type { ListProcess } from './list-process.js';

/** One message to `to` from `from` (a sender the mailbox accepts). */
export const mailFrom =
  (from: string) =>
  (to: string[]): EmailInput => ({ from, to, subject: 'Your order', text: 'Thanks' });

/** Every request body a mailbox received, lower-cased: a suppressed address must never be in it. */
export const requestedOf = (mailbox: Pick<SandboxMailbox, 'requests'>): string =>
  mailbox
    .requests()
    .map((r) => r.body.toLowerCase())
    .join('\n');

/** Two processes on one shared list (this one's module, and a child), and how to freeze their store. */
export interface SharedList {
  here: { email: EmailService; suppressions: EmailSuppressions; gate: SuppressionGate };
  other: ListProcess;
  mailbox: Pick<SandboxMailbox, 'requests'>;
  mail: (to: string[]) => EmailInput;
  /** Freezes the store (SIGSTOP): connections stay open, nothing is answered. */
  freeze(): void;
  thaw(): void;
}

/**
 * What one process adds, the other refuses from its own local copy: the copy gets it through the store's
 * notification (it asks nothing), and with the store frozen the refusal can only come from the copy. Then back:
 * removed here, mailed there again once the removal reached its copy.
 */
export async function sharesOneList({ here, other, mailbox, mail, freeze, thaw }: SharedList): Promise<void> {
  const added = await other.ask('add gone@example.com bounced');
  expect(added).toMatch(/^added gone@example\.com \d+$/);
  const version = Number(added.split(' ')[2]);
  await until(() => here.gate.mirror.version >= version, 20_000, 'the notification');
  freeze();
  try {
    await expect(here.email.send(mail(['Gone@EXAMPLE.com']))).rejects.toBeInstanceOf(EmailSuppressedError);
    await expect(here.email.send(mail(['fine@example.com']))).resolves.toMatchObject({ status: 'sent' });
  } finally {
    thaw();
  }
  expect(requestedOf(mailbox)).not.toContain('gone@example.com');
  expect(await here.suppressions.remove('gone@example.com')).toBe(1);
  const removed = async () => (await other.ask('holds gone@example.com')) === 'holds gone@example.com no';
  await until(removed, 20_000, 'the removal');
  expect(await other.ask('send gone@example.com')).toMatch(/^sent gone@example\.com \d+$/);
}

/**
 * A store that stops answering, by default: sends go on from the list as this process last knew it, an add
 * made meanwhile is refused here at once (the call rejects, retryable) and written once the store answers
 * again, when the other process refuses it too. No request ever names either address.
 */
export async function keepsLastKnown({
  here,
  other,
  mailbox,
  mail,
  freeze,
  thaw,
}: SharedList): Promise<void> {
  await here.suppressions.add('known@example.com', { reason: 'complained' });
  freeze();
  let err: unknown;
  try {
    await expect(here.email.send(mail(['known@example.com']))).rejects.toBeInstanceOf(EmailSuppressedError);
    await expect(here.email.send(mail(['fresh@example.com']))).resolves.toMatchObject({ status: 'sent' });
    err = await here.suppressions.add('late@example.com', { reason: 'bounced' }).catch((e: unknown) => e);
    await expect(here.email.send(mail(['late@example.com']))).rejects.toBeInstanceOf(EmailSuppressedError);
  } finally {
    thaw();
  }
  expect(err).toBeInstanceOf(EmailError);
  expect(err).toMatchObject({ retryable: true });
  const landed = async () => (await other.ask('holds late@example.com')) === 'holds late@example.com yes';
  await until(landed, 40_000, 'the pending write');
  expect(await other.ask('send late@example.com')).toBe('refused late@example.com EmailSuppressedError');
  expect(requestedOf(mailbox)).not.toMatch(/known@example\.com|late@example\.com/);
}

/** `remove` and an ended entry let an address through again (the store's own entries, not only this copy's). */
export async function letsThroughAgain({ here, mail }: Pick<SharedList, 'here' | 'mail'>): Promise<void> {
  await here.suppressions.add('removed@example.com', { reason: 'bounced' });
  const expiresAt = new Date(Date.now() + 400);
  await here.suppressions.add('expiring@example.com', { reason: 'unsubscribed', expiresAt });
  for (const a of ['removed@example.com', 'expiring@example.com'])
    await expect(here.email.send(mail([a]))).rejects.toBeInstanceOf(EmailSuppressedError);
  expect(await here.suppressions.remove('removed@example.com')).toBe(1);
  await expect(here.email.send(mail(['removed@example.com']))).resolves.toMatchObject({ status: 'sent' });
  await until(() => Date.now() > expiresAt.getTime(), 10_000, 'the end of the entry');
  expect(await here.suppressions.check('expiring@example.com')).toEqual([]);
  expect((await here.suppressions.list()).entries).toEqual([]);
  await expect(here.email.send(mail(['expiring@example.com']))).resolves.toMatchObject({ status: 'sent' });
}
