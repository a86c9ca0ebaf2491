import {
  Inject,
  Injectable,
  Module,
  type DynamicModule,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { DiscoveryModule, DiscoveryService } from '@nestjs/core';
import type { EmailJobEvents } from '../interfaces/email-job.interface.js';
import { EmailModule } from '../email.module.js';
import { EmailSandbox } from '../testing/email-sandbox.js';
import { SandboxMailbox } from '../testing/sandbox.mailbox.js';
import type { SandboxMailboxOptions } from '../testing/sandbox.options.js';
import { accountMailboxOptions, type EmailTestingModuleOptions } from './email-testing.options.js';
import { SandboxAccounts } from './sandbox-accounts.service.js';

/**
 * The sandbox and mailboxes of one `EmailTestingModule` (its own, and one per account), and whether the
 * module started the sandbox.
 */
class TestingMailbox {
  constructor(
    readonly sandbox: EmailSandbox,
    readonly mailbox: SandboxMailbox,
    readonly accounts: ReadonlyMap<string, SandboxMailbox>,
    readonly owned: boolean,
  ) {}
}

/** A mailbox for an account, named after it when that name is free on the sandbox (else `mailbox-<n>`). */
function accountMailbox(sandbox: EmailSandbox, id: string, options: SandboxMailboxOptions): SandboxMailbox {
  if (options.name !== undefined) return sandbox.mailbox(options);
  try {
    return sandbox.mailbox({ ...options, name: id });
  } catch {
    return sandbox.mailbox(options); // the id is not a mailbox name, or the sandbox has one by that name
  }
}

/** Makes the module's mailboxes, closing those already made when one cannot be. */
function openMailboxes(sandbox: EmailSandbox, options: EmailTestingModuleOptions, owned: boolean) {
  const made: SandboxMailbox[] = [];
  try {
    const mailbox = sandbox.mailbox(options.mailbox);
    made.push(mailbox);
    const accounts = new Map<string, SandboxMailbox>();
    for (const [id, boxOptions] of accountMailboxOptions(options.accounts)) {
      const box = accountMailbox(sandbox, id, boxOptions);
      made.push(box);
      accounts.set(id, box);
    }
    return new TestingMailbox(sandbox, mailbox, accounts, owned);
  } catch (err) {
    for (const box of made) void box.close();
    throw err;
  }
}

/** Closes the mailbox, and the sandbox the module started, when the app shuts down. */
@Injectable()
class EmailTestingShutdown implements OnApplicationShutdown {
  constructor(@Inject(TestingMailbox) private readonly held: TestingMailbox) {}

  async onApplicationShutdown(): Promise<void> {
    for (const box of this.held.accounts.values()) await box.close();
    await this.held.mailbox.close();
    if (this.held.owned) await this.held.sandbox.close();
  }
}

/** What the app's `EmailQueue` and `EmailOutbox` offer that the tags need: their events. */
interface JobEvents {
  on(event: 'sent', listener: EmailJobEvents['sent']): unknown;
  off(event: 'sent', listener: EmailJobEvents['sent']): unknown;
}

/** An `EmailQueue` or `EmailOutbox` (either build of the package): the job layer's events and calls. */
const isJobs = (value: unknown): value is JobEvents =>
  typeof value === 'object' &&
  value !== null &&
  ['on', 'off', 'keyFor', 'status', 'waitFor'].every(
    (name) => typeof (value as Record<string, unknown>)[name] === 'function',
  );

/**
 * Tags the message each job of the app sent with `job:<jobId>` (the outbox page's `job:` filter), in the
 * module's mailboxes: every `EmailQueue` and `EmailOutbox` of the app whose worker runs in this process,
 * told by their `sent` event. The message is the one with the record's id and the job's idempotency key.
 */
@Injectable()
class EmailTestingJobTags implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly hooked: JobEvents[] = [];

  constructor(
    @Inject(TestingMailbox) private readonly held: TestingMailbox,
    @Inject(DiscoveryService) private readonly discovery: DiscoveryService,
  ) {}

  private readonly tag: EmailJobEvents['sent'] = ({ jobId, idempotencyKey, record }) => {
    for (const box of [this.held.mailbox, ...this.held.accounts.values()]) {
      const sent = box.sentById(record.id);
      if (sent === undefined || sent.idempotencyKey !== idempotencyKey) continue;
      try {
        box.tag(record.id, `job:${jobId}`);
      } catch {
        // a job id past a tag's 200 characters, or a message with its 20 tags: left untagged
      }
      return;
    }
  };

  onApplicationBootstrap(): void {
    for (const wrapper of this.discovery.getProviders()) {
      const instance: unknown = wrapper.isDependencyTreeStatic() ? wrapper.instance : undefined;
      if (!isJobs(instance) || this.hooked.includes(instance)) continue;
      instance.on('sent', this.tag);
      this.hooked.push(instance);
    }
  }

  onApplicationShutdown(): void {
    for (const jobs of this.hooked.splice(0)) jobs.off('sent', this.tag);
  }
}

/** Holds the mailbox; imported by the testing module and by its EmailModule (whose factory reads it). */
@Module({})
class EmailTestingMailboxModule {
  static register(options: EmailTestingModuleOptions): DynamicModule {
    return {
      module: EmailTestingMailboxModule,
      imports: [DiscoveryModule],
      providers: [
        {
          provide: TestingMailbox,
          useFactory: async (): Promise<TestingMailbox> => {
            const given = options.sandbox;
            // A sandbox the module starts does not keep Node running: a setup that fails before the
            // app can close it must not leave the test runner waiting on a listening server.
            const sandbox = given ?? (await EmailSandbox.start({ ...options.sandboxOptions, ref: false }));
            try {
              return openMailboxes(sandbox, options, !given);
            } catch (err) {
              if (!given) await sandbox.close();
              throw err;
            }
          },
        },
        { provide: SandboxMailbox, inject: [TestingMailbox], useFactory: (h: TestingMailbox) => h.mailbox },
        { provide: EmailSandbox, inject: [TestingMailbox], useFactory: (h: TestingMailbox) => h.sandbox },
        {
          provide: SandboxAccounts,
          inject: [TestingMailbox],
          useFactory: (h: TestingMailbox) => new SandboxAccounts(h.accounts),
        },
        EmailTestingShutdown,
        EmailTestingJobTags,
      ],
      exports: [SandboxMailbox, EmailSandbox, SandboxAccounts],
    };
  }
}

/**
 * `EmailModule` pointed at a fresh mailbox of a sandbox, for Nest tests: import it where the app would
 * import `EmailModule`, inject `EmailService` as usual, and inject `SandboxMailbox` to see what was
 * sent. With `accounts`, each account gets a mailbox of its own and `EmailModule` finds their keys
 * through `SandboxAccounts` (inject it to read an account's mailbox). Without a `sandbox` option it
 * starts one; the mailboxes (and a sandbox it started) close with the app (`app.close()` or
 * `moduleRef.close()`).
 *
 * @example
 * const moduleRef = await Test.createTestingModule({
 *   imports: [EmailTestingModule.forRoot(), SignupModule],
 * }).compile();
 * const mailbox = moduleRef.get(SandboxMailbox);
 * @publicApi
 */
@Module({})
export class EmailTestingModule {
  /**
   * An `EmailModule` on a fresh mailbox; `SandboxMailbox` and `EmailSandbox` injectable.
   * @example
   * EmailTestingModule.forRoot({ sandbox, mailbox: { domains: ['shop.test'] } })
   */
  static forRoot(options: EmailTestingModuleOptions = {}): DynamicModule {
    const holder = EmailTestingMailboxModule.register(options);
    return {
      module: EmailTestingModule,
      global: options.isGlobal ?? true,
      imports: [
        holder,
        EmailModule.forRootAsync({
          imports: [holder],
          inject: [SandboxMailbox, SandboxAccounts],
          useFactory: (mailbox: SandboxMailbox, accounts: SandboxAccounts) => ({
            logger: false as const,
            ...options.email,
            baseUrl: mailbox.baseUrl,
            // With accounts: the resolver, and the module's own key only when asked for.
            ...(options.accounts === undefined
              ? { apiKey: mailbox.apiKey }
              : { accounts, ...(options.defaultAccount ? { apiKey: mailbox.apiKey } : {}) }),
          }),
        }),
      ],
      exports: [holder, EmailModule],
    };
  }
}
