import type { InjectionToken, ModuleMetadata } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { EmailModule, EmailService, type EmailModuleOptions } from '../../lib/index.js';
import { startScriptedServer, type Handler, type ScriptedServer } from './scripted-server.js';

export const TEST_API_KEY = 'sk_test_SECRET_do_not_leak_1234567890';

/** What `emailApp` takes: EmailModule options (a test key and `logger: false` by default), and two extras. */
export type EmailAppOptions = Partial<EmailModuleOptions> & {
  baseUrl: string;
  /** Modules the testing module imports beside EmailModule (e.g. EmailQueueModule). */
  imports?: ModuleMetadata['imports'];
  /** Providers replaced before compiling (Nest's `overrideProvider`), e.g. the delivery observer. */
  overrides?: { provide: InjectionToken; useValue: unknown }[];
};

/** Builds a testing module with EmailModule.forRoot and returns it with its EmailService. */
export async function emailApp(
  options: EmailAppOptions,
): Promise<{ moduleRef: TestingModule; email: EmailService; close: () => Promise<void> }> {
  const { imports = [], overrides = [], ...moduleOptions } = options;
  let builder = Test.createTestingModule({
    imports: [EmailModule.forRoot({ apiKey: TEST_API_KEY, logger: false, ...moduleOptions }), ...imports],
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
