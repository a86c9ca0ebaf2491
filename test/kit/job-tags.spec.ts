import { Test, type TestingModule } from '@nestjs/testing';
import { EmailTestingModule, SandboxAccounts, SandboxMailbox } from '../../lib/kit/index.js';
import { EmailQueue, EmailQueueModule } from '../../lib/queue/index.js';
import { RawClient } from '../sandbox/sandbox.client.js';
import { startRedis, type TestRedis } from '../support/redis-server.mjs';
import { useSandbox } from '../support/sandbox.js';

// EmailTestingModule tags each job's message with `job:<jobId>`: the outbox page's `job:` word and Job
// filter find a job's mail. The app's own queue (real Redis), its worker in this process; with accounts,
// the tag lands in the account's mailbox.
describe('EmailTestingModule: the message of each job is tagged with its job id', () => {
  const sandbox = useSandbox({ domains: ['example.com'] });
  let redis: TestRedis;
  let ref: TestingModule | undefined;
  const client = new RawClient(() => sandbox);

  beforeAll(async () => {
    redis = await startRedis();
  });
  afterEach(async () => {
    await ref?.close();
    ref = undefined;
  });
  afterAll(async () => {
    await Promise.all([redis?.stop(), client.close()]);
  });

  const boot = async (prefix: string) => {
    ref = await Test.createTestingModule({
      imports: [
        EmailTestingModule.forRoot({ sandbox, accounts: ['acme'], defaultAccount: true }),
        EmailQueueModule.forRoot({ connection: redis.url, prefix }),
      ],
    }).compile();
    await ref.init();
    return {
      queue: ref.get(EmailQueue),
      own: ref.get(SandboxMailbox),
      acme: ref.get(SandboxAccounts).mailbox('acme'),
    };
  };
  const mail = (subject: string) => ({
    from: 'orders@example.com',
    to: ['ada@example.org'],
    subject,
    text: 'x',
  });

  it("tags the job's message, in the mailbox of the job's account, and the page finds it by job:", async () => {
    const { queue, own, acme } = await boot('tags-a');
    await queue.send(mail('Welcome'), { jobId: 'welcome-42' });
    await queue.send(mail('Welcome'), { jobId: 'welcome-43' }); // look-alike, another job
    await queue.send(mail('Invoice'), { jobId: 'acme-invoice-7', account: 'acme' });
    for (const id of ['welcome-42', 'welcome-43', 'acme-invoice-7'])
      await queue.waitFor(id, { timeoutMs: 15_000 });
    expect(own.sent().map((m) => [m.subject, m.tags])).toEqual([
      ['Welcome', ['job:welcome-42']],
      ['Welcome', ['job:welcome-43']],
    ]);
    expect(acme.sent().map((m) => [m.subject, m.tags])).toEqual([['Invoice', ['job:acme-invoice-7']]]);

    const page = await client.call(
      'GET',
      `/__sandbox/outbox/api/messages?mailbox=${encodeURIComponent(own.name)}&q=job%3Awelcome-43`,
      { key: null },
    );
    expect(page.json.items.map((m: { id: number }) => m.id)).toEqual([own.sent()[1].id]);
    expect(page.json.facets.jobs).toEqual(['welcome-43', 'welcome-42']);
  });

  it('tags nothing a job did not send', async () => {
    const { queue, own } = await boot('tags-b');
    const direct = new RawClient(() => own);
    try {
      await direct.send(mail('Sent by hand'));
      await queue.send(mail('By a job'), { jobId: 'job-1' });
      await queue.waitFor('job-1', { timeoutMs: 15_000 });
      expect(own.sent().map((m) => [m.subject, m.tags])).toEqual([
        ['Sent by hand', []],
        ['By a job', ['job:job-1']],
      ]);
    } finally {
      await direct.close();
    }
  });
});
