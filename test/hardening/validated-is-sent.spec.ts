import fc from 'fast-check';
import { EmailValidationError } from '../../lib/index.js';
import { validateEmailInput } from '../../lib/validation/send.rules.js';
import { validateBatchItems } from '../../lib/validation/batch.rules.js';
import { useScriptedEmailApp } from '../support/email-app.js';
import { emailLogJson } from '../support/records.fixture.js';
import { json } from '../support/scripted-server.js';

// Attacks the gap between what validation reads and what JSON.stringify sends: toJSON, getters that
// answer differently on a second read, Proxies, arrays and Dates with their own toJSON.

type Email = Record<string, unknown>;
const valid = (): Email => ({ from: 'app@example.com', to: ['ada@example.com'], subject: 'Hi', text: 'Yo' });
const bad: Email = { subject: 'Hi\r\nBcc: eve@evil.example', cc: ['eve@evil.example'] };
const sixty = Array.from({ length: 60 }, (_, i) => `r${i}@example.com`);

/** Inputs that each got a forbidden value past the checks before the fix. */
function attacks(): Record<string, () => unknown> {
  return {
    'toJSON on the email': () => ({ ...valid(), toJSON: () => ({ ...valid(), ...bad }) }),
    'getter that flips': () => {
      let reads = 0;
      return Object.defineProperty(valid(), 'subject', {
        enumerable: true,
        get: () => (reads++ === 0 ? 'Hi' : 'Hi\r\nBcc: eve@evil.example'),
      });
    },
    'Proxy that flips on get': () => {
      let reads = 0;
      return new Proxy(valid(), {
        get: (t, k, r) => (k === 'subject' && reads++ > 0 ? 'x\r\ny' : Reflect.get(t, k, r)),
      });
    },
    'class instance with toJSON': () =>
      new (class Doc {
        from = 'app@example.com';
        to = ['ada@example.com'];
        subject = 'Hi';
        text = 'Yo';
        toJSON() {
          return { ...valid(), cc: ['eve@evil.example'] };
        }
      })(),
    'array with its own toJSON': () => ({
      ...valid(),
      to: Object.assign(['ada@example.com'], { toJSON: () => sixty }),
    }),
    'Date with its own toJSON': () => {
      const at = new Date(Date.now() + 60_000);
      return { ...valid(), scheduledAt: Object.assign(at, { toJSON: () => 'tomorrow, maybe' }) };
    },
    'attachment getter adding a url': () => {
      let reads = 0;
      const file = { filename: 'a.txt', content: 'aGk=' };
      Object.defineProperty(file, 'url', {
        enumerable: true,
        get: () => (reads++ === 0 ? undefined : 'http://evil.example/x'),
      });
      return { ...valid(), attachments: [file] };
    },
  };
}

/** Wraps a valid email in one of the shapes that used to split validation from serialization. */
const wrapped = fc
  .tuple(
    fc.record({
      from: fc.constantFrom('app@example.com', 'App <app@example.com>'),
      to: fc.array(fc.constantFrom('ada@example.com', 'bob@example.com'), { minLength: 1, maxLength: 3 }),
      subject: fc.string({ minLength: 1, maxLength: 10 }),
      text: fc.string({ minLength: 1, maxLength: 10 }),
    }),
    fc.constantFrom('plain', 'toJSON', 'getter', 'proxy', 'class', 'arrayToJSON', 'prototype'),
    fc.constantFrom<Email>(bad, { to: sixty }, { subject: 'a\nb' }, { extra: 1 }),
  )
  .map(([email, how, evil]): unknown => {
    switch (how) {
      case 'toJSON':
        return { ...email, toJSON: () => ({ ...email, ...evil }) };
      case 'getter': {
        let n = 0;
        const [k, v] = Object.entries(evil)[0];
        return Object.defineProperty({ ...email }, k, {
          enumerable: true,
          get: () => (n++ === 0 ? email[k as keyof typeof email] : v),
        });
      }
      case 'proxy': {
        let n = 0;
        return new Proxy(
          { ...email },
          {
            get: (t, k, r) => (n++ > 3 ? (evil[k as string] ?? Reflect.get(t, k, r)) : Reflect.get(t, k, r)),
          },
        );
      }
      case 'class':
        return Object.assign(Object.create({ toJSON: () => ({ ...email, ...evil }) }), email);
      case 'arrayToJSON':
        return { ...email, to: Object.assign([...email.to], { toJSON: () => sixty }) };
      case 'prototype':
        return Object.assign(Object.create(evil), email); // inherited fields are not sent, nor checked
      default:
        return email;
    }
  });

const anyInput = fc.oneof(wrapped, fc.anything({ maxDepth: 2 }), fc.constant(null));

describe('validated is sent (defect 1)', () => {
  const app = useScriptedEmailApp({
    scope: 'all',
    handler: (req, res) =>
      json(res, 200, req.url.endsWith('/batch') ? { data: [emailLogJson()] } : emailLogJson()),
    maxRetries: 0,
    idempotency: 'off',
  });

  for (const [name, make] of Object.entries(attacks())) {
    it(`send: ${name} is refused with no request, or sends exactly what passed`, async () => {
      const before = app.server.requests.length;
      const outcome = await app.email.send(make() as never).then(
        () => 'sent',
        (e: unknown) => e,
      );
      if (outcome === 'sent') {
        expect(app.server.requests.length).toBe(before + 1);
        expect(validateEmailInput(JSON.parse(app.server.requests[before].body))).toEqual([]);
      } else {
        expect(outcome).toBeInstanceOf(EmailValidationError);
        expect(app.server.requests.length).toBe(before);
      }
    });

    it(`sendBatch: ${name} as an item is refused with no request, or sends exactly what passed`, async () => {
      const before = app.server.requests.length;
      const item = make() as Email;
      if (item && typeof item === 'object' && 'attachments' in item) return; // batches refuse attachments outright
      const outcome = await app.email.sendBatch([item as never]).then(
        () => 'sent',
        (e: unknown) => e,
      );
      if (outcome === 'sent') {
        expect(app.server.requests.length).toBe(before + 1);
        expect(validateBatchItems(JSON.parse(app.server.requests[before].body))).toEqual([]);
      } else {
        expect(outcome).toBeInstanceOf(EmailValidationError);
        expect(app.server.requests.length).toBe(before);
      }
    });
  }

  it('a toJSON object is refused with a message that says what to pass instead', async () => {
    await expect(app.email.send(attacks()['toJSON on the email']() as never)).rejects.toThrow(/toJSON/);
    await expect(app.email.send(attacks()['getter that flips']() as never)).rejects.toThrow(
      /subject.*getter/,
    );
  });

  it('property: any input is refused with no request, or the body on the wire is the validated snapshot', async () => {
    await fc.assert(
      fc.asyncProperty(anyInput, fc.boolean(), async (input, batch) => {
        const before = app.server.requests.length;
        const run = batch ? app.email.sendBatch([input as never]) : app.email.send(input as never);
        const refused = await run.then(
          () => false,
          (e: unknown) => {
            if (!(e instanceof EmailValidationError)) throw e;
            return true;
          },
        );
        if (refused) return app.server.requests.length === before;
        if (app.server.requests.length !== before + 1) return false;
        const sent: unknown = JSON.parse(app.server.requests[before].body);
        return (batch ? validateBatchItems(sent) : validateEmailInput(sent)).length === 0;
      }),
      { numRuns: 150 },
    );
  });
});
