/**
 * The html check of the sandbox page (`GET api/messages/:id/check`): what a developer should fix before a
 * mail client shows the message, read from the html the app sent (tracking not added). No parser
 * dependency: a tag scanner that is enough for the markup of an email.
 */

/** One thing the check found. `error`: a reader hits it (a dead link, a missing alt); `warn`: worth a look. */
export interface HtmlFinding {
  level: 'error' | 'warn';
  kind: 'link' | 'anchor' | 'image' | 'markup' | 'size';
  message: string;
  /** The tag it is about, as written (cut to 160 characters). */
  excerpt?: string;
}

/** What `checkHtml` answers. */
export interface HtmlCheck {
  bytes: number;
  /** Gmail clips a message whose html is larger than this. */
  clipBytes: number;
  links: number;
  images: number;
  errors: number;
  warnings: number;
  findings: HtmlFinding[];
}

/** Gmail shows "[Message clipped]" past 102 KB of html. */
export const CLIP_BYTES = 102 * 1024;

const TAG = /<([a-zA-Z][a-zA-Z0-9-]*)((?:\s+[^\s"'>/=]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'>]+))?)*)\s*\/?>/g;
const ATTR = /([^\s"'>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+)))?/g;

/** Markup that mail clients drop or do not run, and what to say about it. */
const DROPPED: Record<string, string> = {
  script: 'mail clients never run scripts: the <script> is removed',
  form: 'most mail clients disable forms (Gmail, Outlook): link to a page instead',
  input: 'form fields do not work in most mail clients',
  button: 'buttons do nothing in most mail clients: use a link styled as a button',
  select: 'form fields do not work in most mail clients',
  textarea: 'form fields do not work in most mail clients',
  iframe: 'mail clients remove iframes',
  object: 'mail clients remove <object>',
  embed: 'mail clients remove <embed>',
  video: 'video plays in few mail clients (Apple Mail): give a linked image instead',
  audio: 'audio plays in few mail clients',
  svg: 'inline SVG is not shown by Gmail or Outlook: use a PNG',
  base: '<base> is ignored or stripped by mail clients: write absolute URLs',
};

function decode(value: string): string {
  return value
    .replace(/&amp;/g, '&')
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&apos;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>');
}

function attributes(text: string): Map<string, string> {
  const attrs = new Map<string, string>();
  for (const m of text.matchAll(ATTR)) {
    const name = m[1].toLowerCase();
    if (!attrs.has(name)) attrs.set(name, decode(m[2] ?? m[3] ?? m[4] ?? ''));
  }
  return attrs;
}

const cut = (tag: string) => (tag.length > 160 ? `${tag.slice(0, 157)}…` : tag);

/** Why a link's `href` goes nowhere in a mail client, or undefined when it can work. */
function linkProblem(
  href: string | undefined,
  ids: Set<string>,
): { kind: 'link' | 'anchor'; why: string } | undefined {
  if (href === undefined) return { kind: 'link', why: 'a link without href goes nowhere' };
  const h = href.trim();
  if (h === '' || h === '#') return { kind: 'link', why: `href="${h}" goes nowhere` };
  if (h.startsWith('#')) {
    const name = decodeURIComponent(h.slice(1));
    return ids.has(name) ? undefined : { kind: 'anchor', why: `no element has id or name "${name}"` };
  }
  if (/^javascript:/i.test(h)) return { kind: 'link', why: 'javascript: links are removed by mail clients' };
  if (/^(mailto|tel|sms):/i.test(h)) return undefined;
  if (/^\{\{.*\}\}$/.test(h)) return undefined; // a template variable, filled in at send time
  if (!/^[a-z][a-z0-9+.-]*:/i.test(h)) {
    return {
      kind: 'link',
      why: `relative URL "${h}" has no site to go to in a mail client: write it in full (https://…)`,
    };
  }
  let url: URL;
  try {
    url = new URL(h);
  } catch {
    return { kind: 'link', why: `"${h}" is not a valid URL` };
  }
  if (!/^https?:$/.test(url.protocol)) return undefined;
  if (/^(localhost|127\.\d+\.\d+\.\d+|\[::1\]|0\.0\.0\.0)$/i.test(url.hostname)) {
    return { kind: 'link', why: `${url.host} is the sender's own machine: readers cannot reach it` };
  }
  return undefined;
}

/** Checks `html` as a mail client would show it: links, anchors, images, markup clients drop, size. */
export function checkHtml(html: string): HtmlCheck {
  const source = html.replace(/<!--[\s\S]*?-->/g, '');
  const tags = [...source.matchAll(TAG)].map((m) => ({
    name: m[1].toLowerCase(),
    attrs: attributes(m[2]),
    text: m[0],
  }));
  const ids = new Set<string>();
  for (const t of tags) {
    const id = t.attrs.get('id');
    if (id) ids.add(id);
    if (t.name === 'a' && t.attrs.get('name')) ids.add(t.attrs.get('name')!);
  }
  const findings: HtmlFinding[] = [];
  const seen = new Set<string>();
  let links = 0;
  let images = 0;
  for (const t of tags) {
    if (t.name === 'a') {
      links++;
      const problem = linkProblem(t.attrs.get('href'), ids);
      if (problem)
        findings.push({ level: 'error', kind: problem.kind, message: problem.why, excerpt: cut(t.text) });
    } else if (t.name === 'img') {
      images++;
      const src = t.attrs.get('src');
      if (!src || !src.trim())
        findings.push({
          level: 'error',
          kind: 'image',
          message: 'an image without src shows nothing',
          excerpt: cut(t.text),
        });
      else if (!/^(https?:|cid:|data:|\{\{)/i.test(src.trim()))
        findings.push({
          level: 'error',
          kind: 'image',
          message: `image src "${src}" is not a full http(s) URL: it cannot load`,
          excerpt: cut(t.text),
        });
      else if (/^data:/i.test(src.trim()))
        findings.push({
          level: 'warn',
          kind: 'image',
          message: 'data: images are blocked by Gmail and Outlook: host the image',
          excerpt: cut(t.text),
        });
      if (!t.attrs.has('alt'))
        findings.push({
          level: 'error',
          kind: 'image',
          message: 'image without alt: readers with images off (or a screen reader) get nothing',
          excerpt: cut(t.text),
        });
      const sized =
        (t.attrs.has('width') && t.attrs.has('height')) ||
        /\bwidth\s*:[\s\S]*\bheight\s*:|\bheight\s*:[\s\S]*\bwidth\s*:/i.test(t.attrs.get('style') ?? '');
      if (!sized)
        findings.push({
          level: 'warn',
          kind: 'image',
          message:
            'image without width and height: the layout jumps while it loads, and Outlook may show it at full size',
          excerpt: cut(t.text),
        });
    } else if (t.name in DROPPED && !seen.has(t.name)) {
      seen.add(t.name);
      const count = tags.filter((x) => x.name === t.name).length;
      findings.push({
        level: t.name === 'script' || t.name === 'form' ? 'error' : 'warn',
        kind: 'markup',
        message: `${count} <${t.name}>: ${DROPPED[t.name]}`,
        excerpt: cut(t.text),
      });
    } else if (t.name === 'link' && /stylesheet/i.test(t.attrs.get('rel') ?? '') && !seen.has('link')) {
      seen.add('link');
      findings.push({
        level: 'warn',
        kind: 'markup',
        message: 'external style sheets are dropped by Gmail and Outlook: inline the styles',
        excerpt: cut(t.text),
      });
    } else if (t.name === 'meta' && /refresh/i.test(t.attrs.get('http-equiv') ?? '')) {
      findings.push({
        level: 'warn',
        kind: 'markup',
        message: 'meta refresh is ignored by mail clients',
        excerpt: cut(t.text),
      });
    }
    const handlers = [...t.attrs.keys()].filter((a) => /^on[a-z]+$/.test(a));
    if (handlers.length > 0 && !seen.has('on*')) {
      seen.add('on*');
      findings.push({
        level: 'warn',
        kind: 'markup',
        message: `event handlers (${handlers.join(', ')}) never run in a mail client`,
        excerpt: cut(t.text),
      });
    }
  }
  const bytes = Buffer.byteLength(html, 'utf8');
  if (bytes > CLIP_BYTES)
    findings.push({
      level: 'error',
      kind: 'size',
      message: `${bytes} bytes of html: Gmail clips a message past ${CLIP_BYTES} bytes and hides the rest`,
    });
  else if (bytes > CLIP_BYTES * 0.8)
    findings.push({
      level: 'warn',
      kind: 'size',
      message: `${bytes} bytes of html: close to Gmail's ${CLIP_BYTES}-byte clip`,
    });
  const errors = findings.filter((f) => f.level === 'error').length;
  return {
    bytes,
    clipBytes: CLIP_BYTES,
    links,
    images,
    errors,
    warnings: findings.length - errors,
    findings,
  };
}
