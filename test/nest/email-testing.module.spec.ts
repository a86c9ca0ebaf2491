import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { EmailService } from '../../lib/index.js';
import {
  EmailSandbox,
  EmailTestingModule,
  SandboxMailbox,
  emailMatchers,
  type EmailMatchers,
} from '../../lib/kit/index.js';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace jest {
    // eslint-disable-next-line @typescript-eslint/no-empty-object-type
    interface Matchers<R> extends EmailMatchers<R> {}
  }
}
expect.extend(emailMatchers);

/** Network handles that keep Node running (listening servers, sockets). */
const netHandles = () =>
  process.getActiveResourcesInfo().filter((r) => r === 'TCPServerWrap' || r === 'TCPSocketWrap').length;

/** Waits (bounded) until the count of network handles is back to `count`; answers the last count seen. */
async function settledAt(count: number): Promise<number> {
  for (let i = 0; i < 100 && netHandles() > count; i++) await new Promise((r) => setTimeout(r, 20));
  return netHandles();
}

@Injectable()
class SignupService {
  constructor(private readonly email: EmailService) {}
  welcome(to: string) {
    return this.email.send({ from: 'hello@example.com', to: [to], subject: 'Welcome', text: 'Hi' });
  }
}

@Module({ providers: [SignupService] })
class SignupModule {}

describe('EmailTestingModule', () => {
  it('points EmailService at a fresh mailbox, injects it, and leaves no handle open after close', async () => {
    const before = netHandles();
    const moduleRef = await Test.createTestingModule({
      imports: [EmailTestingModule.forRoot(), SignupModule],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    await app.get(SignupService).welcome('ada@example.org');
    const mailbox = app.get(SandboxMailbox);
    expect(mailbox).toBeInstanceOf(SandboxMailbox);
    expect(mailbox).toHaveSentTo('ada@example.org', { subject: 'Welcome' });
    const sandbox = app.get(EmailSandbox);
    expect(sandbox.messages()).toEqual([]); // the sandbox's default mailbox saw nothing
    expect(netHandles()).toBeGreaterThan(before);
    await app.close();
    expect(await settledAt(before)).toBe(before);
  });

  it('makes one mailbox per module on a given sandbox, and leaves that sandbox running', async () => {
    const sandbox = await EmailSandbox.start();
    const boot = async () => {
      const ref = await Test.createTestingModule({
        imports: [
          EmailTestingModule.forRoot({ sandbox, mailbox: { domains: ['example.com'] } }),
          SignupModule,
        ],
      }).compile();
      return ref.init();
    };
    const [a, b] = await Promise.all([boot(), boot()]);
    await a.get(SignupService).welcome('a@example.org');
    await b.get(SignupService).welcome('b@example.org');
    expect(a.get(SandboxMailbox)).toHaveSentTimes(1);
    expect(a.get(SandboxMailbox)).not.toHaveSentTo('b@example.org');
    expect(b.get(SandboxMailbox)).toHaveSentTo('b@example.org');
    const name = a.get(SandboxMailbox).name;
    expect(sandbox.mailboxes()).toContain(name);
    await a.close();
    expect(sandbox.mailboxes()).not.toContain(name);
    await b.get(SignupService).welcome('b@example.org');
    expect(b.get(SandboxMailbox)).toHaveSentTimes(2);
    await b.close();
    await sandbox.close();
  });

  it('passes EmailModule options through (maxRetries 0: one attempt)', async () => {
    const ref = await Test.createTestingModule({
      imports: [EmailTestingModule.forRoot({ email: { maxRetries: 0 }, isGlobal: false })],
    }).compile();
    await ref.init();
    const mailbox = ref.get(SandboxMailbox);
    mailbox.faults.add({ mode: 'status', status: 503 });
    await expect(ref.get(EmailService).list()).rejects.toMatchObject({ status: 503 });
    expect(mailbox.requests()).toHaveLength(1); // maxRetries 0: no second attempt
    await ref.close();
  });

  it('does not keep Node running when the app fails to boot after starting its sandbox', async () => {
    const before = netHandles();
    @Injectable()
    class Broken {
      constructor() {
        throw new Error('the app cannot boot');
      }
    }
    @Module({ providers: [Broken] })
    class BrokenModule {}
    await expect(
      Test.createTestingModule({ imports: [EmailTestingModule.forRoot(), BrokenModule] }).compile(),
    ).rejects.toThrow('the app cannot boot');
    expect(await settledAt(before)).toBe(before);
  });
});
