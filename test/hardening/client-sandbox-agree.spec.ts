import fc from 'fast-check';
import { EmailValidationError, type EmailInput } from '../../lib/index.js';
import { validateEmailInput } from '../../lib/validation/send.rules.js';
import { useSandboxEmailApp } from '../support/email-app.js';

// The client's checks and the sandbox (which shares no code with them) must not disagree on what the
// service takes: a string the client accepts is accepted by the sandbox, and for the rules on length,
// lone surrogates and direction controls they agree both ways. Everything goes over real HTTP on
// loopback, through EmailService for the first property, straight to the sandbox for the second.

/** Code units that matter to the rules, mixed with ordinary ones. */
const TRICKY = [
  'a', 'Z', '0', ' ', '.', '-', '_', '\u00e9', '\u4e2d', '\u0627', '\ud83d\ude00', '\ud83d', '\ude00',
  '\ud800', '\udfff', '\u202e', '\u202a', '\u2066', '\u2069', '\u200e', '\u200f', '\u061c', '\u200b',
  '\u00ad', '\t', '"', '<', '>', '@', ',',
]; // prettier-ignore
const unit = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...TRICKY) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) },
);
const tricky = (maxLength: number) => fc.array(unit, { maxLength }).map((u) => u.join(''));
/** Filenames around the 255 limit: emoji (2 units each) and plain letters. */
const longName = fc
  .tuple(fc.integer({ min: 0, max: 200 }), fc.integer({ min: 0, max: 140 }), tricky(4))
  .map(([letters, emoji, extra]) => 'a'.repeat(letters) + '\ud83d\udce7'.repeat(emoji) + extra + '.pdf');

const base = { from: 'App <app@example.com>', to: ['ada@example.com'], subject: 'Hi', text: 'Hello' };
const withSubject = (subject: string) => ({ ...base, subject });
const withFilename = (filename: string) => ({ ...base, attachments: [{ filename, content: 'aGk=' }] });
const withFromName = (name: string) => ({ ...base, from: `${name} <app@example.com>` });
const withFrom = (local: string) => ({ ...base, from: `${local}@example.com` });
const withTo = (to: string) => ({ ...base, to: [to] });

describe('the client and the sandbox agree', () => {
  const app = useSandboxEmailApp({ maxRetries: 0 });
  const sandbox = app.sandbox;

  /** The sandbox's answer to a body sent as it is (JSON.stringify escapes a lone surrogate as \udXXX). */
  async function sandboxStatus(body: object): Promise<number> {
    const res = await fetch(`${sandbox.baseUrl}/emails`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sandbox.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    await res.arrayBuffer();
    return res.status;
  }

  // Each with one plain input among the generated ones, so that "accepted at least once" never hangs on chance.
  const fields: [string, fc.Arbitrary<object>, object][] = [
    ['subject', tricky(12).map(withSubject), withSubject('Hello')],
    ['attachment filename', fc.oneof(tricky(12), longName).map(withFilename), withFilename('report.pdf')],
    ['display name of from', tricky(10).map(withFromName), withFromName('Shop')],
    ['local part of from', tricky(8).map(withFrom), withFrom('shop')],
    [
      'recipient address',
      fc.tuple(tricky(6), tricky(6)).map(([a, b]) => withTo(`${a}@${b}.example`)),
      withTo('ada@mail.example'),
    ],
  ];

  for (const [field, inputs, plain] of fields) {
    it(`${field}: refused by the client before any request, or accepted by the sandbox`, async () => {
      let accepted = 0;
      await fc.assert(
        fc.asyncProperty(inputs, async (input) => {
          const before = sandbox.requests().length;
          const result = await app.email.send(input as EmailInput).catch((e: unknown) => e);
          if (result instanceof EmailValidationError) {
            expect(sandbox.requests().length).toBe(before); // refused before any request
          } else {
            expect(result).toMatchObject({ id: expect.any(Number) }); // the sandbox took it (201)
            accepted++;
          }
        }),
        { numRuns: 150, examples: [[plain]] },
      );
      expect(accepted).toBeGreaterThan(0); // the property was not met by refusing everything
    }, 60_000); // 150 sends over HTTP: room for a busy machine
  }

  it('length, lone-surrogate and direction rules: the same verdict both ways on generated strings', async () => {
    const cases = fc.oneof(
      fc.oneof(tricky(12), longName).map((s) => ['filename', withFilename(s)] as const),
      tricky(12)
        .filter((s) => s.length > 0 && !/[\r\n]/.test(s))
        .map((s) => ['subject', withSubject(s)] as const),
    );
    const verdicts = { both: 0, neither: 0 };
    await fc.assert(
      fc.asyncProperty(cases, async ([field, input]) => {
        const clientAccepts = !validateEmailInput(input).some((i) => i.path.includes(field));
        const status = await sandboxStatus(input);
        expect([201, 400]).toContain(status);
        expect({ field, clientAccepts }).toEqual({ field, clientAccepts: status === 201 });
        verdicts[clientAccepts ? 'both' : 'neither']++;
      }),
      { numRuns: 400 },
    );
    expect(verdicts.both).toBeGreaterThan(0);
    expect(verdicts.neither).toBeGreaterThan(0);
  }, 60_000); // 400 requests: room for a busy machine

  it('the length count is UTF-16 code units on both sides, at the edges', async () => {
    const emoji = '\ud83d\udce7'; // 1 code point, 2 units
    for (const [filename, ok] of [
      ['a'.repeat(255), true],
      ['a'.repeat(256), false],
      ['a'.repeat(253) + emoji, true],
      ['a'.repeat(254) + emoji, false],
      [emoji.repeat(127) + 'a', true],
      [emoji.repeat(128), false],
      [emoji.repeat(200), false], // 200 code points, 400 units: the case the probe found
      ['', false],
    ] as const) {
      const input = withFilename(filename);
      const issues = validateEmailInput(input);
      expect({ filename: filename.length, client: issues.length === 0 }).toEqual({
        filename: filename.length,
        client: ok,
      });
      expect({ filename: filename.length, sandbox: await sandboxStatus(input) }).toEqual({
        filename: filename.length,
        sandbox: ok ? 201 : 400,
      });
    }
  });
});
