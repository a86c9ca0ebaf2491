import { ConfigModule } from '@nestjs/config';
import { Test, type TestingModule } from '@nestjs/testing';
import { inspect } from 'node:util';
import { EmailModule, EmailService, emailConfig, parseEmailEnv } from '../../lib/index.js';
import { EmailQueue, EmailQueueModule } from '../../lib/queue/index.js';
import { EMAIL_MODULE_OPTIONS } from '../../lib/email.module-definition.js';
import { EmailResolvedOptions } from '../../lib/config/email.options.js';
import { EmailAccounts } from '../../lib/delivery/email-accounts.store.js';
import { startRedis, type TestRedis } from '../support/redis-server.mjs';
import { startScriptedServer, type ScriptedServer } from '../support/scripted-server.js';

// Inspects everything that holds or reaches the API key (the app, EmailService, the options the module
// keeps, the resolved options, the transport, EmailQueue) in every util.inspect mode, including
// `customInspect: false` with `showHidden: true` and `getters: true`, which print hidden properties and
// call getters: the module's copy of the options holds no property that leads to the key.

const KEY = 'sk_live_InspectMe_7Hq2ZpL9xW4vN8cR';

/**
 * Any run of 10 characters of the key, as is or as util.inspect quotes it. The app prints as ~135 MB
 * at depth Infinity (inspect repeats every object it reaches by more than one path), so the text is
 * scanned once per 5-character block of the key (every run of 10 holds a whole block at an offset that
 * is a multiple of 5) and each run is checked only where a block is found: a tenth of the time of one
 * search per run.
 */
function leaks(text: string): string[] {
  const found = new Set<string>();
  for (let block = 0; block + 5 <= KEY.length; block += 5) {
    const piece = KEY.slice(block, block + 5);
    for (let at = text.indexOf(piece); at >= 0; at = text.indexOf(piece, at + 1)) {
      for (let start = Math.max(0, block - 5); start <= block && start + 10 <= KEY.length; start++) {
        const run = KEY.slice(start, start + 10);
        if (text.startsWith(run, at - (block - start))) found.add(run);
      }
    }
  }
  return [...found];
}

/**
 * Every util.inspect mode, in the least number of runs: at depth Infinity a mode prints all that any
 * smaller depth does, and `getters: true` all that `getters: false` does (the value beside `[Getter]`),
 * so depth Infinity with getters, for each of customInspect and showHidden, covers every combination.
 */
const MODES = [true, false].flatMap((customInspect) =>
  [true, false].map((showHidden) => ({ customInspect, showHidden, depth: Infinity, getters: true })),
);
/** The same without calling getters: what the app's own config object can promise (see the last test). */
const NO_GETTERS = MODES.map((m) => ({ ...m, getters: false }));

/**
 * The whole app under `showHidden: true` overflows util.inspect's stack, which then prints only
 * `[TestingModule]` after 2 s of work: that mode checks nothing for the app, so the app is inspected
 * in the other modes only. Hidden properties stay covered by the entries of the objects that hold or
 * reach the key (EmailService, the options, the transport), inspected in every mode, and EmailQueue.
 */
const modesFor = (name: string, modes: typeof MODES, appRawOnly: boolean) =>
  name === 'app'
    ? modes.filter((m) => !m.showHidden && !(appRawOnly && m.customInspect))
    : // EmailQueue holds a ModuleRef: without showHidden it prints the whole app again (135 MB, all of
      // it reachable from the app, inspected in those modes), so it is inspected with showHidden only,
      // raw (2 s a mode): the custom inspectors it could meet are those of the key holders above,
      // run over the whole app and on each holder in every mode
      name === 'EmailQueue'
      ? modes.filter((m) => m.showHidden && !m.customInspect)
      : modes;

/**
 * `appRawOnly`: the app only with `customInspect: false`. The custom inspectors are the same code
 * whatever way the options came in, and the first test runs them over the whole app; later tests
 * (options from a factory, from @nestjs/config) check what the app holds, which the raw mode prints.
 */
function expectNoKey(things: Record<string, unknown>, modes = MODES, appRawOnly = false): void {
  for (const [name, thing] of Object.entries(things)) {
    for (const mode of modesFor(name, modes, appRawOnly)) {
      expect({ name, mode, leaks: leaks(inspect(thing, mode)) }).toEqual({ name, mode, leaks: [] });
    }
  }
}

/**
 * What holds the key, looked up in the app. The first lookup builds Nest's lookup cache, which reaches
 * every module once per token: the app then prints the same objects again and again (~135 MB instead
 * of ~2 MB, 2.5 s per mode), nothing new. So a test inspects the app before its first lookup when it can
 * (`expectNoKey({ app: ref })` first); the app of the first test, started by `init()`, has that cache
 * already.
 */
function providers(ref: TestingModule): Record<string, unknown> {
  return {
    EmailService: ref.get(EmailService),
    'module options': ref.get(EMAIL_MODULE_OPTIONS),
    'resolved options': ref.get(EmailResolvedOptions),
    'accounts (every desk, its transport and limiter)': ref.get(EmailAccounts),
  };
}

describe('options that hold the key keep it out of every util.inspect mode', () => {
  let server: ScriptedServer;
  let redis: TestRedis;
  beforeAll(async () => {
    server = await startScriptedServer();
    redis = await startRedis();
  });
  afterAll(async () => {
    await server.close();
    await redis.stop();
  });

  it('forRoot: the app, EmailService, the options, the transport, and EmailQueue beside it', async () => {
    const start = async () => {
      const ref = await Test.createTestingModule({
        imports: [
          EmailModule.forRoot({ apiKey: KEY, baseUrl: server.url, logger: false }),
          EmailQueueModule.forRoot({ connection: redis.url, worker: false }),
        ],
      }).compile();
      await ref.init();
      return ref;
    };
    // each mode of the app on an app of its own: an inspection with getters builds the lookup cache
    // (see providers), which would make the next one print the same objects again many times over
    for (const mode of MODES) {
      if (modesFor('app', [mode], false).length === 0) continue;
      const ref = await start();
      try {
        expectNoKey({ app: ref }, [mode]);
      } finally {
        await ref.close();
      }
    }
    const ref = await start();
    try {
      expectNoKey({ ...providers(ref), EmailQueue: ref.get(EmailQueue) });
    } finally {
      await ref.close();
    }
  });

  it('forRootAsync with a factory', async () => {
    const ref = await Test.createTestingModule({
      imports: [
        EmailModule.forRootAsync({
          useFactory: () => ({ apiKey: KEY, baseUrl: server.url, logger: false as const }),
        }),
      ],
    }).compile();
    try {
      expectNoKey({ app: ref }, MODES, true);
      expectNoKey(providers(ref));
    } finally {
      await ref.close();
    }
  });

  it('emailConfig through @nestjs/config: the key shows as a getter, never its value (getters: false)', async () => {
    const env = { EMAIL_API_KEY: KEY, EMAIL_BASE_URL: server.url };
    const saved = { ...process.env };
    Object.assign(process.env, env);
    try {
      const ref = await Test.createTestingModule({
        imports: [
          EmailModule.forRootAsync({
            imports: [ConfigModule.forFeature(emailConfig)],
            inject: [emailConfig.KEY],
            useFactory: (config: ReturnType<typeof emailConfig>) => ({ ...config, logger: false as const }),
          }),
        ],
      }).compile();
      try {
        // the config namespace is the app's own object (ConfigService hands out its apiKey): held behind
        // an accessor, it shows as [Getter/Setter] unless inspect is told to call getters
        expectNoKey({ app: ref }, NO_GETTERS, true);
        expectNoKey(providers(ref), NO_GETTERS);
        expect(ref.get(EmailService)).toBeInstanceOf(EmailService);
      } finally {
        await ref.close();
      }
    } finally {
      process.env = saved;
    }
    const parsed = parseEmailEnv(env);
    expect(parsed.apiKey).toBe(KEY);
    expect({ ...parsed }.apiKey).toBe(KEY); // a spread copy still carries it, as documented
    expectNoKey({ parsed }, NO_GETTERS);
  });
});
