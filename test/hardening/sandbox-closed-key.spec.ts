import { useSandbox } from '../support/sandbox.js';
import { inline, RawClient } from '../sandbox/sandbox.client.js';

/**
 * Issue 36: a request whose key no mailbox holds (a closed mailbox's, an unknown one, none) is
 * answered 401 and touches no mailbox: not the default mailbox's faults, not its request log.
 */
describe('a key no mailbox holds reaches no mailbox (issue 36)', () => {
  const sandbox = useSandbox({ reset: true });
  const client = new RawClient(() => sandbox);
  afterAll(() => client.close());

  it.each([
    [
      'a closed mailbox',
      (): string | null => {
        const mailbox = sandbox.mailbox();
        const key = mailbox.apiKey;
        void mailbox.close();
        return key;
      },
    ],
    ['an unknown key', (): string | null => 'sk_test_nobody_knows_this_key_0000'],
    ['no key at all', (): string | null => null],
  ] as [string, () => string | null][])(
    "%s: 401, the default mailbox's fault unused, its request log empty",
    async (_, keyOf) => {
      const fault = sandbox.faults.add({ route: 'POST /emails', mode: 'status', status: 503 });
      const answer = await client.send(inline({ subject: 'stray' }), { key: keyOf() });
      expect(answer.status).toBe(401);
      expect(answer.json).toEqual({
        error: expect.stringMatching(/invalid API key|missing bearer credentials/),
      });
      expect(fault.hits).toBe(0);
      expect(sandbox.requests()).toEqual([]);
      expect(sandbox.messages()).toEqual([]);
      // The default mailbox's own key still meets its fault.
      expect((await client.send(inline({ subject: 'own' }))).status).toBe(503);
      expect(fault.hits).toBe(1);
      expect(sandbox.requests()).toHaveLength(1);
    },
  );
});
