import { request } from 'undici';
import { EmailSandbox } from '../../lib/testing/index.js';
import { inline, ISO, RawClient } from './sandbox.client.js';
import { useSandbox } from '../support/sandbox.js';

const HTML =
  '<html><body><p>Hi</p><a href="https://shop.example/a?x=1&amp;y=2">A</a> <a href=\'https://shop.example/b\'>B</a> <a href="mailto:x@y.z">M</a></body></html>';

describe('EmailSandbox tracking', () => {
  const sandbox = useSandbox({ reset: true });
  const client = new RawClient(() => sandbox);
  const fetchRaw = async (url: string) => {
    const res = await request(url, { dispatcher: client.agent });
    const body = Buffer.from(await res.body.arrayBuffer());
    return { status: res.statusCode, headers: res.headers, body };
  };
  const sendTracked = async (extra: Record<string, unknown> = {}) => {
    const sent = await client.send(inline({ html: HTML, trackOpens: true, trackClicks: true, ...extra }));
    expect(sent.status).toBe(201);
    const detail = await client.call('GET', `/emails/${sent.json.id}`);
    const links = [...detail.json.html.matchAll(/href=["']([^"']+)["']/g)].map((m) => m[1]);
    const pixel = /<img src="([^"]+)"/.exec(detail.json.html)?.[1];
    return { id: sent.json.id as number, html: detail.json.html as string, links, pixel };
  };

  afterAll(async () => {
    await client.close();
  });

  it('adds a pixel before </body> and rewrites http(s) links through the sandbox', async () => {
    const { html, links, pixel } = await sendTracked();
    expect(pixel?.startsWith(sandbox.baseUrl)).toBe(true);
    expect(html.indexOf('<img')).toBeLessThan(html.indexOf('</body>'));
    expect(links).toHaveLength(3);
    expect(links[0].startsWith(sandbox.baseUrl)).toBe(true);
    expect(links[1].startsWith(sandbox.baseUrl)).toBe(true);
    expect(links[2]).toBe('mailto:x@y.z');
  });

  it('records an open when the pixel is fetched: counters, openedAt on the first only, events newest first', async () => {
    const { id, pixel } = await sendTracked();
    const gif = await fetchRaw(pixel!);
    expect(gif.status).toBe(200);
    expect(gif.headers['content-type']).toBe('image/gif');
    expect(gif.body.subarray(0, 3).toString()).toBe('GIF');
    const first = (await client.call('GET', `/emails/${id}`)).json;
    expect(first.openCount).toBe(1);
    expect(first.openedAt).toMatch(ISO);
    await new Promise((r) => setTimeout(r, 5));
    await fetchRaw(pixel!);
    const second = (await client.call('GET', `/emails/${id}`)).json;
    expect(second.openCount).toBe(2);
    expect(second.openedAt).toBe(first.openedAt);
    const events = (await client.call('GET', `/emails/${id}/events`)).json;
    expect(events).toHaveLength(2);
    expect(events[0].id).toBeGreaterThan(events[1].id);
    expect(events[0]).toEqual({
      id: events[0].id,
      type: 'open',
      url: null,
      occurredAt: expect.stringMatching(ISO),
    });
  });

  it('records a click with its url and redirects to the original link', async () => {
    const { id, links } = await sendTracked();
    const res = await fetchRaw(links[0]);
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe('https://shop.example/a?x=1&y=2');
    await fetchRaw(links[1]);
    const detail = (await client.call('GET', `/emails/${id}`)).json;
    expect(detail.clickCount).toBe(2);
    expect(detail.clickedAt).toMatch(ISO);
    expect(detail.openCount).toBe(0);
    const events = (await client.call('GET', `/emails/${id}/events`)).json;
    expect(events.map((e: { url: string }) => e.url)).toEqual([
      'https://shop.example/b',
      'https://shop.example/a?x=1&y=2',
    ]);
    expect(events.every((e: { type: string }) => e.type === 'click')).toBe(true);
  });

  it('answers 404 for a tracking link with a wrong token or link index', async () => {
    const { links, pixel } = await sendTracked();
    expect((await fetchRaw(pixel!.replace(/\/[0-9a-f]{16}\//, '/0000000000000000/'))).status).toBe(404);
    expect((await fetchRaw(links[0].replace(/\/click\/0$/, '/click/9'))).status).toBe(404);
  });

  it('tracks nothing without html or with the flags off, following the account defaults', async () => {
    const textOnly = await client.send(inline({ html: null, trackOpens: true, trackClicks: true }));
    expect(() => sandbox.simulateOpen(textOnly.json.id)).toThrow(/does not apply/);
    const off = await client.send(inline({ html: HTML }));
    expect(off.json.trackOpens).toBe(false);
    const detail = await client.call('GET', `/emails/${off.json.id}`);
    expect(detail.json.html).toBe(HTML);
    expect(() => sandbox.simulateClick(off.json.id, 'https://x.example')).toThrow(/does not apply/);
  });

  it('tracks only what is asked: clicks without opens', async () => {
    const { html, links } = await sendTracked({ trackOpens: false });
    expect(html).not.toContain('<img');
    expect(links[0].startsWith(sandbox.baseUrl)).toBe(true);
  });

  it('simulateOpen and simulateClick record events as the real links do', async () => {
    const { id } = await sendTracked();
    const open = sandbox.simulateOpen(id);
    const click = sandbox.simulateClick(id, 'https://shop.example/b');
    const firstLink = sandbox.simulateClick(id);
    expect(open.type).toBe('open');
    expect(click).toMatchObject({ type: 'click', url: 'https://shop.example/b' });
    expect(firstLink.url).toBe('https://shop.example/a?x=1&y=2');
    const detail = (await client.call('GET', `/emails/${id}`)).json;
    expect([detail.openCount, detail.clickCount]).toEqual([1, 2]);
    expect(sandbox.events(id).map((e) => e.id)).toEqual([firstLink.id, click.id, open.id]);
    expect(() => sandbox.simulateOpen(999)).toThrow(/does not exist/);
  });

  it('records nothing for a message that is still scheduled', async () => {
    const { id } = await sendTracked({ scheduledAt: new Date(Date.now() + 3_600_000).toISOString() });
    expect(() => sandbox.simulateOpen(id)).toThrow(/scheduled/);
  });
});

describe('EmailSandbox account tracking defaults', () => {
  it('applies the key tracking defaults when a send omits the flags', async () => {
    // own sandbox: options unlike the shared one (useSandbox starts one per describe)
    const sandbox = await EmailSandbox.start({ tracking: { opens: true, clicks: true } });
    const client = new RawClient(() => sandbox);
    try {
      const res = await client.send(inline());
      expect(res.json).toMatchObject({ trackOpens: true, trackClicks: true });
      const explicit = await client.send(inline({ trackOpens: false }));
      expect(explicit.json).toMatchObject({ trackOpens: false, trackClicks: true });
      expect(sandbox.simulateOpen(res.json.id).type).toBe('open');
    } finally {
      await client.close();
      await sandbox.close();
    }
  });
});
