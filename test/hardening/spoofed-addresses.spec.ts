import { EmailValidationError } from '../../lib/index.js';
import { useScriptedEmailApp } from '../support/email-app.js';
import { emailLogJson } from '../support/records.fixture.js';
import { json } from '../support/scripted-server.js';

// Attacks the address rules with the code points a display name uses to pose as another address:
// bidirectional overrides and isolates, zero-width and other format characters, C1 controls, private
// use, lone surrogates, line separators. Each is refused before any request.

const SPOOFS: Record<string, string> = {
  'right-to-left override in the name': '"Bank\u202e moc.knab@" <evil@example.com>',
  'left-to-right isolate in the name': 'Support\u2066 <evil@example.com>',
  'pop directional isolate in the address': 'evil\u2069@example.com',
  'zero-width joiner in the address': 'pay\u200dpal@example.com',
  'soft hyphen in the domain': 'ada@exam\u00adple.com',
  'C1 control in the name': 'Ada\u0085 <ada@example.com>',
  'private-use code point in the name': 'Ada \ue000 <ada@example.com>',
  'lone high surrogate in the name': '"Ada \ud800" <ada@example.com>',
  'lone low surrogate in the address': 'ada\udc00@example.com',
  'line separator in a quoted name': '"Ada\u2028Lovelace" <ada@example.com>',
  'tag character (astral format) in the name': 'Ada\u{e0041} <ada@example.com>',
};

describe('spoofed addresses (defect 5)', () => {
  const app = useScriptedEmailApp({
    scope: 'all',
    handler: (_req, res) => json(res, 200, emailLogJson()),
    maxRetries: 0,
  });

  for (const [name, address] of Object.entries(SPOOFS)) {
    it(`refuses a ${name}, in from and in to, with no request`, async () => {
      const before = app.server.requests.length;
      for (const input of [
        { from: address, to: ['ada@example.com'], subject: 'Hi', text: 'Yo' },
        { from: 'app@example.com', to: ['bob@example.com', address], subject: 'Hi', text: 'Yo' },
      ]) {
        const err = await app.email.send(input).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(EmailValidationError);
        expect((err as Error).message).toMatch(/invisible or direction-changing/);
      }
      expect(app.server.requests.length).toBe(before);
    });
  }

  it('still sends names in any script, with accents and emoji', async () => {
    const before = app.server.requests.length;
    for (const from of [
      'Zoë Ångström <zoe@example.com>',
      '"李 雷" <li@example.com>',
      'Ada 😀 <ada@example.com>',
    ]) {
      await app.email.send({ from, to: ['bob@example.com'], subject: 'Hi', text: 'Yo' });
    }
    expect(app.server.requests.length).toBe(before + 3);
  });
});
