import fc from 'fast-check';
import {
  emailMatchers,
  lastMessageTo,
  RemoteSandboxMailbox,
  waitForMessage,
  type EmailMatchers,
  type SandboxMailbox,
  type SandboxMessageMatch,
  type SandboxSentMessage,
} from '../../lib/testing/index.js';
import { inline, RawClient, assertionFailure } from '../sandbox/sandbox.client.js';
import { useSandbox } from '../support/sandbox.js';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace jest {
    // eslint-disable-next-line @typescript-eslint/no-empty-object-type
    interface Matchers<R> extends EmailMatchers<R> {}
  }
}

expect.extend(emailMatchers);

/**
 * Issue 36: matchers and helpers check every criterion they are given. An unknown key fails, naming
 * it and the keys accepted; the record's own field names work as the criteria they stand for;
 * asymmetric matchers are applied to values, never to the prototype; a remote mailbox is refused
 * with a clear reason instead of a TypeError from inside.
 */

const failure = assertionFailure;

/** A match written the way users write it, which the types may not know. */
const loose = (match: Record<string, unknown>) => match as SandboxMessageMatch;

describe('matchers check every criterion (issue 36)', () => {
  const sandbox = useSandbox();
  const client = new RawClient(() => sandbox);
  let mailbox: SandboxMailbox;

  beforeAll(async () => {
    mailbox = sandbox.mailbox();
    const key = { key: mailbox.apiKey };
    await client.send(inline({ to: ['ada@example.org'], subject: 'Reset', text: 'Your token is 42' }), key);
    await client.send(
      { from: 'shop@example.com', to: ['bob@example.org'], templateId: 1, variables: { name: 'Bob' } },
      key,
    );
  });
  afterAll(() => client.close());

  it("the record's own field names are criteria: toAddresses, fromAddress, bodyText, sentHtml", () => {
    expect(
      failure(() => expect(mailbox).toHaveSent(loose({ toAddresses: ['nobody@example.org'] }))),
    ).toContain('Expected a message matching { to: ["nobody@example.org"] }');
    expect(mailbox).toHaveSent(loose({ toAddresses: ['ada@example.org'] }));
    expect(() => expect(mailbox).toHaveSent({ bodyText: 'token is 7' })).toThrow(/Expected a message/);
    expect(mailbox).toHaveSent({ bodyText: 'token is 42', fromAddress: 'orders@example.com' });
    expect(() => expect(mailbox).toHaveSent({ sentHtml: 'nothing of the kind' })).toThrow(
      /Expected a message/,
    );
  });

  it('an unknown key fails, naming it and the keys accepted, with .not too', () => {
    for (const match of [{ subjet: 'Reset' }, { recipient: 'ada@example.org' }, { constructor: 'x' }]) {
      const message = failure(() => expect(mailbox).toHaveSent(loose(match)));
      expect(message).toContain(`unknown criterion "${Object.keys(match)[0]}"`);
      expect(message).toMatch(
        /accepts to, from, subject, text, html, templateId, variables, attachments, status/,
      );
      expect(failure(() => expect(mailbox).not.toHaveSent(loose(match)))).toContain('unknown criterion');
      expect(failure(() => expect(mailbox).toHaveSentTimes(0, loose(match)))).toContain('unknown criterion');
      expect(failure(() => expect(mailbox).toHaveSentTo('ada@example.org', loose(match)))).toContain(
        'unknown criterion',
      );
    }
  });

  it('a value left undefined, an empty list, the same criterion twice: each fails, named', () => {
    expect(failure(() => expect(mailbox).toHaveSent({ subject: undefined }))).toContain(
      'subject is undefined',
    );
    expect(failure(() => expect(mailbox).toHaveSent({ to: [] }))).toContain('to is empty');
    expect(failure(() => expect(mailbox).toHaveSent({ variables: {} }))).toContain('variables is empty');
    expect(failure(() => expect(mailbox).toHaveSent(loose({ attachments: [{ name: 'a.pdf' }] })))).toContain(
      'attachments [0] has unknown "name"',
    );
    expect(
      failure(() => expect(mailbox).toHaveSent({ to: 'ada@example.org', toAddresses: ['x'] })),
    ).toContain('toAddresses and to are the same criterion');
    expect(failure(() => expect(mailbox).toHaveSent(loose({ subject: 42 })))).toContain(
      'subject must be a string, a RegExp or an asymmetric matcher (got 42)',
    );
  });

  it("asymmetric matchers see the message's own variables, never its prototype", () => {
    expect(
      failure(() => expect(mailbox).toHaveSent({ variables: { constructor: expect.anything() } })),
    ).toContain('no variable constructor');
    expect(() => expect(mailbox).toHaveSent({ variables: { toString: expect.any(Function) } })).toThrow();
    expect(mailbox).toHaveSent({ variables: { name: expect.stringMatching(/^B/) } });
  });

  it('waitForMessage checks its criteria: an unknown key rejects at once, an alias is matched', async () => {
    await expect(waitForMessage(mailbox, loose({ recipient: 'ada@example.org' }))).rejects.toThrow(
      /waitForMessage: unknown criterion "recipient"/,
    );
    await expect(
      waitForMessage(mailbox, loose({ toAddresses: ['nobody@example.org'] }), {
        timeoutMs: 100,
        intervalMs: 10,
      }),
    ).rejects.toThrow(/No message matching \{ to: \["nobody@example.org"\] \}/);
    const found = await waitForMessage(mailbox, loose({ toAddresses: ['ada@example.org'] }));
    expect(found.subject).toBe('Reset');
  });

  it('a remote mailbox: the matchers say to await its sent(), which then works', async () => {
    const remote = await RemoteSandboxMailbox.create(sandbox.baseUrl);
    try {
      await client.send(inline({ to: ['cy@example.org'], subject: 'Remote' }), { key: remote.apiKey });
      const message = failure(() => expect(remote as never).toHaveSent());
      expect(message).toContain('expect(await mailbox.sent()).toHaveSent(');
      expect(message).not.toContain('is not a function');
      expect(() => lastMessageTo(remote as never, 'cy@example.org')).toThrow(/RemoteSandboxMailbox/);
      expect(await remote.sent()).toHaveSent({ to: 'cy@example.org', subject: 'Remote' });
      expect(await waitForMessage(remote, { subject: 'Remote' })).toMatchObject({ subject: 'Remote' });
    } finally {
      await remote.close();
    }
  });
});

/** Generated mail: a few senders, recipients, subjects, bodies; inline and template. */
const ADDRESSES = ['ada@example.org', 'bob@example.org', 'Cy <cy@example.org>'];
const mail = fc.oneof(
  fc.record({
    from: fc.constantFrom('app@example.com', 'Shop <shop@example.com>'),
    to: fc.subarray(ADDRESSES, { minLength: 1 }),
    subject: fc.string({ minLength: 1, maxLength: 12 }),
    text: fc.string({ minLength: 1, maxLength: 30 }),
    html: fc.option(
      fc.string({ minLength: 1, maxLength: 30 }).map((s) => `<p>${s}</p>`),
      { nil: undefined },
    ),
  }),
  fc.record({
    from: fc.constant('app@example.com'),
    to: fc.subarray(ADDRESSES, { minLength: 1 }),
    templateId: fc.constant(1),
    variables: fc.record({ name: fc.string({ minLength: 1, maxLength: 8 }) }),
  }),
);

/** A snowman never occurs in generated mail: a value carrying one is had by no message. */
const ABSENT = '\u2603';
const absentText = fc.string({ maxLength: 8 }).map((s) => `${ABSENT}${s}`);
const KNOWN = new Set([
  'to',
  'from',
  'subject',
  'text',
  'html',
  'templateId',
  'variables',
  'attachments',
  'status',
  'toAddresses',
  'fromAddress',
  'bodyText',
  'sentHtml',
]);

/** A criterion under a key the matchers do not know, with any value. */
const unknownKey = fc
  .record({
    key: fc.oneof(
      fc.string({ minLength: 1, maxLength: 12 }).filter((k) => !KNOWN.has(k)),
      // What users mistype, and what Object.prototype holds.
      fc.constantFrom(
        'subjet',
        'recipient',
        'body',
        'bodytext',
        'constructor',
        'toString',
        '__proto__',
        'valueOf',
      ),
    ),
    value: fc.anything(),
  })
  .map(({ key, value }) => {
    const match: Record<string, unknown> = {};
    Object.defineProperty(match, key, { value, enumerable: true });
    return match;
  });

/** A known criterion with a value that no generated message has. */
const absentValue: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
  fc.constantFrom('to', 'toAddresses').chain((k) => absentText.map((v) => ({ [k]: [`${v}@example.org`] }))),
  fc
    .constantFrom('from', 'fromAddress', 'subject', 'text', 'bodyText', 'html', 'sentHtml', 'status')
    .chain((k) => absentText.map((v) => ({ [k]: v }))),
  fc.integer({ min: 2, max: 1_000 }).map((templateId) => ({ templateId })),
  fc.oneof(
    absentText.map((v) => ({ variables: { name: v } })),
    fc.constantFrom('constructor', 'toString', '__proto__', 'hasOwnProperty', 'other').map((n) => {
      // An own key, `__proto__` included, asking only that the value exists.
      const variables: Record<string, unknown> = {};
      Object.defineProperty(variables, n, { value: expect.anything(), enumerable: true });
      return { variables };
    }),
  ),
  absentText.map((v) => ({ attachments: [{ filename: v }] })),
);

/** Whether an assertion fails (throws); `false` means it passed. */
const fails = (assertion: () => unknown): boolean => {
  try {
    assertion();
    return false;
  } catch {
    return true;
  }
};

describe('no criterion passes unchecked (property, issue 36)', () => {
  const sandbox = useSandbox();
  const client = new RawClient(() => sandbox);
  afterAll(() => client.close());

  /** Sends `inputs` to a fresh mailbox and gives its messages. */
  async function sentOf(inputs: object[]): Promise<SandboxSentMessage[]> {
    const mailbox = sandbox.mailbox();
    try {
      for (const input of inputs) {
        const answer = await client.send(input, { key: mailbox.apiKey });
        expect(answer.status).toBe(201);
      }
      return mailbox.sent();
    } finally {
      await mailbox.close();
    }
  }

  /** Every matcher and helper given `match` over `sent`: each must fail, never pass. */
  async function expectAllFail(sent: SandboxSentMessage[], match: SandboxMessageMatch, unknown: boolean) {
    const to = sent[0].toAddresses[0];
    const verdicts: Record<string, boolean> = {
      toHaveSent: fails(() => expect(sent).toHaveSent(match)),
      toHaveSentTo: fails(() => expect(sent).toHaveSentTo(to, match)),
      toHaveSentTimes: fails(() => expect(sent).toHaveSentTimes(1, match)),
      toHaveSentTimesAll: fails(() => expect(sent).toHaveSentTimes(sent.length, match)),
      waitForMessage: await waitForMessage(sent, match, { timeoutMs: 30, intervalMs: 10 }).then(
        () => false,
        () => true,
      ),
    };
    if (unknown) {
      // Not even the negations pass: nothing was checked.
      verdicts.notToHaveSent = fails(() => expect(sent).not.toHaveSent(match));
      verdicts.toHaveSentTimes0 = fails(() => expect(sent).toHaveSentTimes(0, match));
    }
    const passed = Object.entries(verdicts).filter(([, failed]) => !failed);
    expect({ match, passed: passed.map(([name]) => name) }).toEqual({ match, passed: [] });
  }

  it('a criterion with an unknown key, or a value no message has, makes every matcher and helper fail', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(mail, { minLength: 1, maxLength: 4 }),
        fc.oneof(
          unknownKey.map((match) => ({ match, unknown: true })),
          absentValue.map((match) => ({ match, unknown: false })),
        ),
        async (inputs, { match, unknown }) => {
          const sent = await sentOf(inputs);
          await expectAllFail(sent, match as SandboxMessageMatch, unknown);
          if (!unknown && ('to' in match || 'toAddresses' in match)) {
            const address = ((match.to ?? match.toAddresses) as string[])[0];
            expect(lastMessageTo(sent, address)).toBeUndefined();
          }
        },
      ),
      { numRuns: 150 },
    );
  }, 60_000);
});
