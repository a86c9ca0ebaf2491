import type { ServerResponse } from 'node:http';
import { inspect } from 'node:util';
import { EmailErrorInterceptor, EmailService } from '../../lib/index.js';
import { CapturingLogger } from '../support/capturing.logger.js';
import { emailApp } from '../support/email-app.js';
import { startScriptedServer, type ScriptedServer } from '../support/scripted-server.js';
import { attributeTexts, registerMemoryOtel, type MemoryOtel } from '../telemetry/otel.support.js';

// Attacks the redaction of the API key with a service that echoes it back in another spelling: in its
// error body (`{ error }`, or plain text we cannot read) and in response headers. For every spelling,
// nothing a caller, a log, a trace or the interceptor shows may hold the key in any spelling.

const KEY = 'sk_live_"quoted"\\back\\slash_7Hq2ZpL9xW4vN8cR';
const BYTES = Buffer.from(KEY);

const every = (s: string, f: (ch: string) => string) => [...s].map(f).join('');
const hex2 = (ch: string) => ch.charCodeAt(0).toString(16).padStart(2, '0');
const NAMED: Record<string, string> = { '"': '&quot;', '\\': '&bsol;', _: '&lowbar;' };
const wrap = (s: string, n: number, sep: string) => s.replace(new RegExp(`(.{${n}})`, 'g'), `$1${sep}`);
/** Base64 of the key inside a longer base64 text, starting at byte offset `a` (0, 1 or 2). */
const base64At = (a: number, url = false) =>
  Buffer.concat([Buffer.from('ctx:'.slice(0, a + 3)), BYTES, Buffer.from('!end')]).toString(
    url ? 'base64url' : 'base64',
  );

/** Every spelling of the key the redaction promises to find (docs/security.md). */
const SPELLINGS: Record<string, string> = {
  raw: KEY,
  'upper-cased': KEY.toUpperCase(),
  'lower-cased': KEY.toLowerCase(),
  'JSON-escaped': JSON.stringify(KEY).slice(1, -1),
  'JSON-escaped twice': JSON.stringify(JSON.stringify(KEY)).slice(1, -1),
  'JSON \\u escapes for every character': every(KEY, (c) => `\\u00${hex2(c)}`),
  'URL-encoded': encodeURIComponent(KEY),
  '%XX for every character': every(KEY, (c) => `%${hex2(c).toUpperCase()}`),
  '%xx for every character, lower-case hex': every(KEY, (c) => `%${hex2(c)}`),
  'URL-encoded twice': encodeURIComponent(encodeURIComponent(KEY)),
  'base64, aligned': BYTES.toString('base64'),
  'base64, 1 byte in': base64At(1),
  'base64, 2 bytes in': base64At(2),
  'base64, 3 bytes in (aligned inside a longer text)': base64At(0),
  'base64url, 1 byte in': base64At(1, true),
  'base64url, 2 bytes in': base64At(2, true),
  'base64 wrapped every 76 characters': wrap(base64At(1), 76, '\r\n'),
  'base64 upper-cased': BYTES.toString('base64').toUpperCase(),
  hex: BYTES.toString('hex'),
  'hex upper-cased': BYTES.toString('hex').toUpperCase(),
  'hex spaced out': wrap(BYTES.toString('hex'), 2, ' '),
  '\\x escapes': every(KEY, (c) => `\\x${hex2(c)}`),
  'HTML decimal entities': every(KEY, (c) => `&#${c.charCodeAt(0)};`),
  'HTML hex entities': every(KEY, (c) => `&#x${hex2(c)};`),
  'HTML hex entities, upper-case, zero-padded': every(KEY, (c) => `&#X00${hex2(c).toUpperCase()};`),
  'HTML named entities where they exist': every(KEY, (c) => NAMED[c] ?? c),
  'HTML-escaped, then JSON-escaped': JSON.stringify(every(KEY, (c) => NAMED[c] ?? c)).slice(1, -1),
  'wrapped every 6 characters': wrap(KEY, 6, '\n'),
  'wrapped every 6 characters, CRLF': wrap(KEY, 6, '\r\n'),
  'spaced out': every(KEY, (c) => `${c} `),
  'spaced out with tabs and no-break spaces': every(KEY, (c) => `${c}\t\u00a0`),
  'dots between characters': every(KEY, (c) => `${c}.`),
  'zero-width spaces between characters': every(KEY, (c) => `${c}\u200b`),
  'upper-cased and spaced out': every(KEY.toUpperCase(), (c) => `${c} `),
};

const fold = (s: string) => s.replace(/[A-Z]/g, (c) => c.toLowerCase());
const strip = (s: string) => s.replace(/[\s\u00a0\u200b.]+/g, '');

/** Runs of 10 characters of each spelling (blanks and dots left out), at every other offset, with their spelling. */
const RUNS = new Map<string, string[]>();
for (const [name, form] of Object.entries(SPELLINGS)) {
  const f = strip(fold(form));
  // 10 characters: a run that short of base64 or hex can be in ordinary text by chance, 10 hardly
  for (let i = 0; i + 10 <= f.length; i += 2) {
    const run = f.slice(i, i + 10);
    RUNS.set(run, [...(RUNS.get(run) ?? []), name]);
  }
}

/**
 * The spellings found in `text` (any of their runs, blanks and dots left out): one pass over the text's
 * own runs of 10, looked up among the spellings' runs, which finds what a search for each run finds.
 */
function leaks(text: string): string[] {
  const t = strip(fold(text));
  const found = new Set<string>();
  for (let i = 0; i + 10 <= t.length; i++)
    for (const name of RUNS.get(t.slice(i, i + 10)) ?? []) found.add(name);
  return [...found];
}

/** Every `util.inspect` option combination the promise covers. */
const INSPECT_MODES = [true, false].flatMap((customInspect) =>
  [true, false].flatMap((showHidden) =>
    [0, 2, 10, Infinity].flatMap((depth) =>
      [true, false].map((getters) => ({ customInspect, showHidden, depth, getters })),
    ),
  ),
);

function everythingShown(err: unknown): string {
  return [
    String(err),
    (err as Error).message,
    (err as Error).stack,
    JSON.stringify(err),
    ...INSPECT_MODES.map((o) => inspect(err, o)),
  ].join('\n');
}

describe('the key never shows, in any spelling the service echoes it in', () => {
  let otel: MemoryOtel;
  let server: ScriptedServer;
  let email: EmailService;
  let close: () => Promise<void>;
  const logger = new CapturingLogger();
  const interceptorLogger = new CapturingLogger();
  const interceptor = new EmailErrorInterceptor({ logger: interceptorLogger });
  const context = {
    getType: () => 'http',
    switchToHttp: () => ({ getResponse: () => ({ setHeader: () => undefined }) }),
  } as never;

  beforeAll(async () => {
    otel = registerMemoryOtel();
    server = await startScriptedServer();
    ({ email, close } = await emailApp({ baseUrl: server.url, apiKey: KEY, logger, maxRetries: 1 }));
  });
  afterAll(async () => {
    await close();
    await server.close();
    await otel.shutdown();
  });

  const answers: Record<string, (form: string, res: ServerResponse) => void> = {
    'the error of a 400, and a header': (form, res) => {
      res.writeHead(400, { 'content-type': 'application/json', 'x-echo': headerSafe(form) });
      res.end(JSON.stringify({ error: `bad key ${form} (check it)` }));
    },
    'the error of a 503 (retried, logged), past the 500-character cut': (form, res) => {
      res.writeHead(503, { 'content-type': 'application/json', 'www-authenticate': headerSafe(form) });
      res.end(JSON.stringify({ error: 'x'.repeat(480) + form }));
    },
    'a 200 we cannot read (plain text), past the 200-character cut of its excerpt': (form, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'x-echo': headerSafe(form) });
      res.end('y'.repeat(185) + form + ' tail');
    },
  };

  for (const [spelling, form] of Object.entries(SPELLINGS)) {
    for (const [where, answer] of Object.entries(answers)) {
      it(`${spelling}: in ${where}`, async () => {
        otel.reset();
        const logged = logger.lines.length;
        const before = server.requests.length;
        server.handle((_req: unknown, res: ServerResponse) => answer(form, res));
        const err = await email.get(1).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(Error);
        expect(server.requests.length).toBeGreaterThan(before); // the server really answered
        const answered = interceptor.translate(err, context) as { getResponse(): unknown };
        const shown = [
          everythingShown(err),
          JSON.stringify(answered.getResponse()),
          inspect(answered, { depth: Infinity, showHidden: true }),
          logger.lines.slice(logged).join('\n'),
          interceptorLogger.lines.join('\n'),
          ...otel.spans().flatMap(attributeTexts),
        ].join('\n');
        expect(leaks(shown)).toEqual([]);
        // the text around the key is still there, the key replaced by the mark
        expect(everythingShown(err)).toContain('[redac');
      });
    }
  }
});

/** A header value must be visible ASCII: line breaks and non-ASCII blanks become spaces there. */
function headerSafe(form: string): string {
  return form.replace(/[^\x20-\x7e]+/g, ' ');
}
