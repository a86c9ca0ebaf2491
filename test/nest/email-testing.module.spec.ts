import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
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

const ROOT = process.cwd();

/**
 * Runs the child script in plain Node and answers its JSON line. The child must exit by itself: a
 * handle left open would keep it running until the timeout kills it, and the spec fails.
 */
function runChild(scenario: 'close' | 'fail' | 'env'): Promise<unknown> {
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  const register = pathToFileURL(join(ROOT, 'test/nest/support/ts-esm.register.mjs')).href;
  const script = join(ROOT, 'test/nest/support/testing-module-exit.child.mjs');
  return new Promise((done, fail) =>
    execFile(
      process.execPath,
      ['--import', register, script, pathToFileURL(join(ROOT, 'lib')).href, scenario],
      { cwd: ROOT, env, timeout: 30_000 },
      (err, stdout, stderr) =>
        err
          ? fail(new Error(`${err.killed ? 'did not exit by itself; ' : ''}${stderr || err.message}`))
          : done(JSON.parse(stdout.trim().split('\n').at(-1) as string)),
    ),
  );
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
  it('points EmailService at a fresh mailbox and injects it', async () => {
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
    await app.close();
    expect(sandbox.mailboxes()).toEqual(['default']);
  });

  it('leaves no handle open once the app is closed: a Node process using it exits by itself', async () => {
    await expect(runChild('close')).resolves.toEqual({ status: 'sent', sent: 1 });
  }, 40_000);

  it('makes one mailbox per module on a given sandbox, and leaves that sandbox running', async () => {
    // own sandbox: the test is that the module leaves a given sandbox running
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

  it('leaves nothing open when an app fails to boot for want of EMAIL_API_KEY and EMAIL_BASE_URL', async () => {
    await expect(runChild('env')).resolves.toEqual({ error: 'EmailEnvError' });
  }, 40_000);

  it('does not keep Node running when the app fails to boot after starting its sandbox', async () => {
    await expect(runChild('fail')).resolves.toEqual({ error: 'the app cannot boot' });
  }, 40_000);
});
