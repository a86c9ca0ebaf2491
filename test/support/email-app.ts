import { Test, type TestingModule } from '@nestjs/testing';
import { EmailModule, EmailService, type EmailModuleOptions } from '../../lib/index.js';
import { startScriptedServer, type ScriptedServer } from './scripted-server.js';

export const TEST_API_KEY = 'sk_test_SECRET_do_not_leak_1234567890';

/** Builds a testing module with EmailModule.forRoot and returns it with its EmailService. */
export async function emailApp(
  options: Partial<EmailModuleOptions> & { baseUrl: string },
): Promise<{ moduleRef: TestingModule; email: EmailService; close: () => Promise<void> }> {
  const moduleRef = await Test.createTestingModule({
    imports: [EmailModule.forRoot({ apiKey: TEST_API_KEY, logger: false, ...options })],
  }).compile();
  await moduleRef.init();
  const email = moduleRef.get(EmailService);
  return { moduleRef, email, close: () => moduleRef.close() };
}

/** What `useScriptedEmailApp` gives each test: a fresh scripted server and a service pointed at it. */
export interface ScriptedEmailApp {
  server: ScriptedServer;
  email: EmailService;
  moduleRef: TestingModule;
}

/**
 * The set-up most specs share: before each test, a scripted node:http server on 127.0.0.1 and an
 * `EmailModule` pointed at it (`options` added to the defaults); after each, both closed. Read the
 * fields of the returned object inside the tests.
 */
export function useScriptedEmailApp(
  options: Partial<EmailModuleOptions> & {
    /** appended to the server's URL for `baseUrl` */ path?: string;
  } = {},
): ScriptedEmailApp {
  const { path = '', ...moduleOptions } = options;
  const app = {} as ScriptedEmailApp;
  let close: (() => Promise<void>) | undefined;
  beforeEach(async () => {
    app.server = await startScriptedServer();
    const built = await emailApp({ baseUrl: app.server.url + path, ...moduleOptions });
    app.email = built.email;
    app.moduleRef = built.moduleRef;
    close = built.close;
  });
  afterEach(async () => {
    await close?.();
    await app.server?.close();
  });
  return app;
}
