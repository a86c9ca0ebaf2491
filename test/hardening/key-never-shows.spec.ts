import { Test } from '@nestjs/testing';
import { inspect } from 'node:util';
import {
  EmailErrorInterceptor,
  EmailModule,
  EmailOptionsError,
  type EmailModuleOptions,
} from '../../lib/index.js';
import { emailApp, useScriptedEmailApp, type EmailAppOptions } from '../support/email-app.js';
import { CapturingLogger } from '../support/capturing.logger.js';
import { emailDetailJson } from '../support/records.fixture.js';
import { json, type ScriptedServer } from '../support/scripted-server.js';

// Attacks the redaction of the API key: a service that echoes the key back in its error text, in a
// body we cannot read, in a record field, JSON-escaped, URL-encoded, or straddling the cut of a text.

const KEY = 'sk_live_"quoted"\\back\\slash_7Hq2ZpL9xW4vN8cR';

/** Any run of 8 characters of the key, in any form it can take in a text. */
function leaks(text: string): string[] {
  const forms = [KEY, JSON.stringify(KEY).slice(1, -1), encodeURIComponent(KEY)];
  const found: string[] = [];
  for (const f of forms) {
    for (let i = 0; i + 8 <= f.length; i++)
      if (text.includes(f.slice(i, i + 8))) found.push(f.slice(i, i + 8));
  }
  return found;
}

/** Everything a caller or a log can see of an error. */
function shown(err: unknown): string {
  return [String(err), inspect(err, { depth: 5 }), JSON.stringify(err)].join('\n');
}

describe('the key never shows (defect 2)', () => {
  const app = useScriptedEmailApp({ scope: 'all', apiKey: KEY, maxRetries: 0 });

  const echoes: Record<string, (res: Parameters<Parameters<ScriptedServer['handle']>[0]>[1]) => void> = {
    'straddling the 500-character cut of apiMessage': (res) =>
      json(res, 400, { error: 'x'.repeat(490) + KEY + ' tail' }),
    'URL-encoded in apiMessage': (res) => json(res, 400, { error: `bad key ${encodeURIComponent(KEY)}` }),
    'a prefix of the key at the end of apiMessage': (res) =>
      json(res, 400, { error: `key was ${KEY.slice(0, 20)}` }),
    'JSON-escaped in the excerpt of an unreadable body': (res) =>
      json(res, 200, { note: 'x'.repeat(150), key: KEY }),
    'straddling the 200-character cut of the excerpt': (res) => {
      res.writeHead(502, { 'content-type': 'text/plain' });
      res.end('y'.repeat(190) + KEY);
    },
    'quoted by the record parser (got "...")': (res) => json(res, 200, emailDetailJson({ id: KEY })),
    'quoted by the record parser, URL-encoded': (res) =>
      json(res, 200, emailDetailJson({ subject: 1, fromAddress: encodeURIComponent(KEY) })),
  };

  for (const [name, answer] of Object.entries(echoes)) {
    it(`no piece of the key in the error: ${name}`, async () => {
      const before = app.server.requests.length;
      app.server.handle((_req, res) => answer(res));
      const err = await app.email.get(1).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Error);
      expect(app.server.requests.length).toBe(before + 1);
      expect(leaks(shown(err))).toEqual([]);
    });
  }

  it("the interceptor's warn log of a 5xx shows no piece of the key", async () => {
    const logger = new CapturingLogger();
    const interceptor = new EmailErrorInterceptor({ logger });
    const context = {
      getType: () => 'http',
      switchToHttp: () => ({ getResponse: () => ({ setHeader: () => undefined }) }),
    } as never;
    for (const answer of [
      echoes['straddling the 500-character cut of apiMessage'],
      echoes['quoted by the record parser (got "...")'],
    ]) {
      app.server.handle((_req, res) => answer(res));
      const err = await app.email.get(1).catch((e: unknown) => e);
      interceptor.translate(err, context);
    }
    app.server.handle((_req, res) => json(res, 500, { error: `boom ${KEY.slice(0, 25)}` }));
    interceptor.translate(await app.email.get(1).catch((e: unknown) => e), context);
    expect(logger.messages.length).toBeGreaterThanOrEqual(2);
    expect(leaks(logger.messages.join('\n'))).toEqual([]);
  });

  it('the record parser still says what it got, redacted', async () => {
    app.server.handle((_req, res) => json(res, 200, emailDetailJson({ id: `${KEY}!` })));
    const err = (await app.email.get(1).catch((e: unknown) => e)) as Error;
    expect(err.message).toMatch(/got "\[redacted\]!"/);
  });

  it('forRoot option errors quote no piece of apiKey or baseUrl', async () => {
    const bad: Partial<EmailModuleOptions>[] = [
      { apiKey: KEY, baseUrl: `not a url ${KEY}` },
      { apiKey: KEY, baseUrl: `ftp://host/${KEY}` },
      { apiKey: KEY, baseUrl: `http://${KEY.slice(0, 12).replace(/[^a-z]/gi, '')}.example.com` },
      { apiKey: `${KEY}\u00e9`, baseUrl: 'https://m.example.com' },
    ];
    for (const options of bad) {
      const err = await emailApp(options as EmailAppOptions).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(EmailOptionsError);
      expect(leaks(shown(err))).toEqual([]);
      expect(shown(err)).not.toContain('sklivequ');
    }
  });

  it('inspecting the module definition, the module ref or its JSON does not print the key', async () => {
    const definition = EmailModule.forRoot({ apiKey: KEY, baseUrl: app.server.url, logger: false });
    expect(leaks(inspect(definition, { depth: Infinity }))).toEqual([]);
    expect(leaks(JSON.stringify(definition.providers))).toEqual([]);
    const asyncDefinition = EmailModule.forRootAsync({
      useFactory: () => ({ apiKey: KEY, baseUrl: app.server.url, logger: false as const }),
    });
    // its own testing module: the forRootAsync definition is what is inspected (emailApp uses forRoot)
    const moduleRef = await Test.createTestingModule({ imports: [asyncDefinition] }).compile();
    expect(leaks(inspect(moduleRef, { depth: 7 }))).toEqual([]);
    await moduleRef.close();
  });
});
