import type { EmailSandbox } from '../../lib/testing/index.js';
import { RawClient } from '../sandbox/sandbox.client.js';
import { startSearchSandbox, stageSearch, WORDS } from './page.search.fixture.js';

// The page's search words over its data route (what the page asks): each word against look-alike mail,
// the time zone of dates, words it cannot use, and the values the filters offer. The page itself (the box,
// the words beside it, the filters) is driven in Chromium by page.search.chromium.spec.ts.
describe("the sandbox page's search words (api/messages?q=)", () => {
  let sandbox: EmailSandbox;
  const client = new RawClient(() => sandbox);
  const list = async (q: string, tz?: number) => {
    const params = new URLSearchParams({ q });
    if (tz !== undefined) params.set('tz', String(tz));
    const res = await client.call('GET', `/__sandbox/outbox/api/messages?${params}`, { key: null });
    expect(res.status).toBe(200);
    return res.json as {
      matched: number;
      items: Array<{ subject: string; account: string | null; tags: string[]; templateId: number | null }>;
      problems: string[];
      facets: { accounts: string[]; templates: number[]; jobs: string[] };
    };
  };
  const subjects = async (q: string, tz?: number) => (await list(q, tz)).items.map((m) => m.subject);

  beforeAll(async () => {
    sandbox = await startSearchSandbox();
    await stageSearch(sandbox, client);
  });
  afterAll(async () => {
    await Promise.all([sandbox?.close(), client.close()]);
  });

  it.each(WORDS)('%s', async (q, want) => {
    const found = await list(q);
    expect(found.items.map((m) => m.subject)).toEqual(want);
    expect(found.matched).toBe(want.length);
    expect(found.problems).toEqual([]);
  });

  it("reads dates in the page's time zone (tz, minutes east of UTC), and a time with its own zone as given", async () => {
    // B was made at 2026-11-22T20:00Z: the 22nd in UTC, the 23rd in Tokyo (UTC+9).
    expect(await subjects('before:2026-11-23', 0)).toEqual(['Your invoice', 'Your invoice']);
    expect(await subjects('before:2026-11-23', 540)).toEqual(['Your invoice']);
    expect(await subjects('after:2026-11-22T20:00', 0)).toHaveLength(4);
    expect(await subjects('after:2026-11-22T20:00:01', 0)).toHaveLength(3);
    expect(await subjects('before:2026-11-22T21:01+01:00', 540)).toEqual(['Your invoice', 'Your invoice']);
    expect(await subjects('before:2026-11-22T20:59+01:00', 540)).toEqual(['Your invoice']);
  });

  it('treats words case-insensitively, an unknown prefix as text, and an open quote as running to the end', async () => {
    expect(await subjects('FROM:BILLING Amount')).toEqual(['Your invoice', 'Your invoice']);
    expect(await subjects('subject:"reset')).toEqual(['Reset link inside']);
    expect(await subjects('42 -"order 42"')).toEqual(['Your invoice']); // A's text: "Amount due 42"
    await expect(subjects('re:order')).resolves.toEqual([]); // plain text, found nowhere
    expect(await subjects('due:')).toEqual([]);
  });

  it('leaves out words it cannot use and says why, instead of matching nothing', async () => {
    const found = await list('before:soon is:starred template:one has:files from: to:ada');
    expect(found.items.map((m) => m.subject)).toEqual(['Welcome, Ada', 'Reset link inside', 'Your invoice']);
    expect(found.problems).toEqual([
      'before:soon: before: takes a date such as 2026-11-23, or 2026-11-23T09:30',
      'is:starred: is: takes read or unread',
      'template:one: template: takes a template id, e.g. template:1',
      'has:files: has: takes attachment',
      'from:: give a value after the colon',
    ]);
    expect(await subjects('after:2026-02-30')).toHaveLength(5); // no such day: left out, not matched
    const bad = await client.call('GET', '/__sandbox/outbox/api/messages?tz=9999', { key: null });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toBe('tz must be an integer from -840 to 840');
  });

  it('gives each row its account, template and tags, and the filters the values the mailbox holds', async () => {
    const found = await list('');
    expect(found.items.map((m) => [m.subject, m.account, m.templateId, m.tags])).toEqual([
      ['Order 42 shipped', 'acme', null, ['job:ship-42', 'carrier']],
      ['Welcome, Ada', 'globex', 1, ['job:welcome-42']],
      ['Reset link inside', 'acme', null, []],
      ['Your invoice', 'globex', null, []],
      ['Your invoice', 'acme', null, []],
    ]);
    expect(found.facets).toEqual({
      accounts: ['acme', 'globex'],
      templates: [1],
      jobs: ['ship-42', 'welcome-42'],
    });
    // the filters offer every value of the mailbox, whatever the search shows
    expect((await list('template:1')).facets.jobs).toEqual(['ship-42', 'welcome-42']);
  });

  it('never names a key as an account: a key given without one is its own account, and stays unnamed', async () => {
    const mailbox = sandbox.mailbox();
    try {
      const own = new RawClient(() => mailbox);
      await own.send({ from: 'a@example.com', to: ['b@example.org'], subject: 'Mine', text: 'x' });
      await own.close();
      const res = await client.call(
        'GET',
        `/__sandbox/outbox/api/messages?mailbox=${encodeURIComponent(mailbox.name)}`,
        { key: null },
      );
      expect(res.json.items[0]).toMatchObject({ subject: 'Mine', account: null });
      expect(res.json.facets.accounts).toEqual([]);
      expect(res.text).not.toContain(mailbox.apiKey);
      const one = await client.call(
        'GET',
        `/__sandbox/outbox/api/messages/1?mailbox=${encodeURIComponent(mailbox.name)}`,
        { key: null },
      );
      expect(one.json).toMatchObject({ account: null, tags: [] });
      expect(one.text).not.toContain(mailbox.apiKey);
    } finally {
      await mailbox.close();
    }
  });

  it('tags a message through mailbox.tag: trimmed, each once, checked', () => {
    const id = sandbox.sent()[0].id;
    expect(sandbox.tag(id, ' first ', 'first', 'second')).toEqual(['first', 'second']);
    expect(sandbox.sent()[0].tags).toEqual(['first', 'second']);
    expect(() => sandbox.tag(id, '')).toThrow('a tag is a non-empty string');
    expect(() => sandbox.tag(id, 'a\nb')).toThrow('a tag has no control characters');
    expect(() => sandbox.tag(id, 'x'.repeat(201))).toThrow('a tag is at most 200 characters');
    expect(() => sandbox.tag(id, ...Array.from({ length: 19 }, (_, i) => `t${i}`))).toThrow(
      'a message holds at most 20 tags',
    );
    expect(sandbox.sent()[0].tags).toEqual(['first', 'second']); // a refused call changes nothing
    expect(() => sandbox.tag(999, 'x')).toThrow('email 999 does not exist');
  });
});
