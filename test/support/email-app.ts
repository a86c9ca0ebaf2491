import type { InjectionToken, ModuleMetadata } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { EmailModule, EmailService, type EmailModuleOptions } from '../../lib/index.js';
import type { EmailSandbox, SandboxMailbox } from '../../lib/testing/index.js';
import { useSandbox, type UseSandboxOptions } from './sandbox.js';
import { startScriptedServer, type Handler, type ScriptedServer } from './scripted-server.js';

export const TEST_API_KEY = 'sk_test_SECRET_do_not_leak_1234567890';

/** What `emailApp` takes: EmailModule options (a test key and `logger: false` by default), and extras. */
export type EmailAppOptions = Partial<EmailModuleOptions> & {
  /** Where it sends; or `sandbox`. */
  baseUrl?: string;
  /** A sandbox (or one of its mailboxes) to send to: its `baseUrl` and `apiKey`. */
  sandbox?: SandboxMailbox;
  /** Modules the testing module imports beside EmailModule (e.g. EmailQueueModule). */
  imports?: ModuleMetadata['imports'];
  /** Providers replaced before compiling (Nest's `overrideProvider`), e.g. the delivery observer. */
  overrides?: { provide: InjectionToken; useValue: unknown }[];
};

/** Builds a testing module with EmailModule.forRoot and returns it with its EmailService. */
export async function emailApp(
  options: EmailAppOptions,
): Promise<{ moduleRef: TestingModule; email: EmailService; close: () => Promise<void> }> {
  const { imports = [], overrides = [], sandbox, ...moduleOptions } = options;
  const target = sandbox ? { apiKey: sandbox.apiKey, baseUrl: sandbox.baseUrl } : {};
  let builder = Test.createTestingModule({
    imports: [
      EmailModule.forRoot({
        apiKey: TEST_API_KEY,
        logger: false,
        ...target,
        ...moduleOptions,
      } as EmailModuleOptions),
      ...imports,
    ],
  });
  for (const { provide, useValue } of overrides)
    builder = builder.overrideProvider(provide).useValue(useValue);
  const moduleRef = await builder.compile();
  await moduleRef.init();
  const email = moduleRef.get(EmailService);
  return { moduleRef, email, close: () => moduleRef.close() };
}

/** What `useScriptedEmailApp` gives the tests: a scripted server and a service pointed at it. */
export interface ScriptedEmailApp {
  server: ScriptedServer;
  email: EmailService;
  moduleRef: TestingModule;
  /** Closes the module now (for a test of what closing does); closing again, as the hooks do, is a no-op. */
  close(): Promise<void>;
}

/**
 * The set-up most specs share: a scripted node:http server on 127.0.0.1 and an `EmailModule` pointed at
 * it (`options` added to `emailApp`'s defaults), both closed afterwards. By default a fresh pair for each
 * test; `scope: 'all'` keeps one pair for the whole `describe` block (for tests that each script the
 * server anew). Read the fields of the returned object inside the tests.
 */
export function useScriptedEmailApp(
  options: Omit<EmailAppOptions, 'baseUrl'> & {
    /** appended to the server's URL for `baseUrl` */ path?: string;
    /** the server's first handler (by default it answers 404 until a test scripts it) */ handler?: Handler;
    /** 'each' (default): beforeEach/afterEach; 'all': beforeAll/afterAll */ scope?: 'each' | 'all';
  } = {},
): ScriptedEmailApp {
  const { path = '', handler, scope = 'each', ...appOptions } = options;
  const app = {} as ScriptedEmailApp;
  const [before, after] = scope === 'all' ? [beforeAll, afterAll] : [beforeEach, afterEach];
  before(async () => {
    app.server = await startScriptedServer(handler);
    const built = await emailApp({ baseUrl: app.server.url + path, ...appOptions });
    app.email = built.email;
    app.moduleRef = built.moduleRef;
    let closing: Promise<void> | undefined;
    app.close = () => (closing ??= built.close());
  });
  after(async () => {
    await app.close?.();
    await app.server?.close();
  });
  return app;
}

/** What `useSandboxEmailApp` gives the tests: the sandbox and a service pointed at it. */
export interface SandboxEmailApp {
  /** The sandbox (usable at once: a stand-in for the one started in beforeAll, see useSandbox). */
  sandbox: EmailSandbox;
  email: EmailService;
  moduleRef: TestingModule;
}

/**
 * A sandbox and an `EmailModule` pointed at it (its default mailbox), one pair for the `describe`
 * block, the app closed before the sandbox: `sandbox` takes `useSandbox`'s options (`reset: true`
 * empties it before each test), the rest goes to `emailApp`. Read `email` and `moduleRef` inside tests.
 */
export function useSandboxEmailApp(
  options: Omit<EmailAppOptions, 'baseUrl' | 'sandbox'> & { sandbox?: UseSandboxOptions } = {},
): SandboxEmailApp {
  const { sandbox: sandboxOptions, ...appOptions } = options;
  let close: (() => Promise<void>) | undefined;
  const app = { sandbox: useSandbox(sandboxOptions, async () => close?.()) } as SandboxEmailApp;
  beforeAll(async () => {
    const built = await emailApp({ sandbox: app.sandbox, ...appOptions });
    app.email = built.email;
    app.moduleRef = built.moduleRef;
    close = built.close;
  });
  return app;
}
