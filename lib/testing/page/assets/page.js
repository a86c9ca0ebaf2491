// The email sandbox's page (its heading: Outbox). Plain DOM, no framework, no build step.
// Safety rule: every value that comes from a message (subjects, names, addresses, bodies, file names,
// variables) reaches the page as text (textContent, Text nodes) or as an attribute value; nothing is
// ever parsed as HTML. A message's html is only shown in a sandboxed frame served with its own CSP.
'use strict';

const $ = (id) => document.getElementById(id);
const PAGE = 50;
const view = {
  q: '',
  loaded: PAGE,
  items: [],
  selected: null,
  htmlFor: null,
  offsetMs: 0,
  seq: 0,
  mailbox: new URLSearchParams(location.search).get('mailbox') || 'default',
  /** How the html is shown: 'rendered' or 'source'; the preview width; whether remote images load. */
  htmlView: 'rendered',
  width: 'full',
  images: false,
  /** Ids ticked in the list (several messages to mark or delete at once). */
  checked: new Set(),
  /** The row the keyboard is on (j/k move it, Enter opens it), by id. */
  cursor: null,
};

const WIDTHS = { full: null, tablet: 768, phone: 375 };

/** Builds an element: `props` sets text, class, listeners (`onclick`) and attributes; children are nodes or text. */
function el(tag, props, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'text') node.textContent = String(value);
    else if (key === 'class') node.className = value;
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children) if (child !== null && child !== undefined) node.append(child);
  return node;
}

function fill(target, ...children) {
  const node = typeof target === 'string' ? $(target) : target;
  node.replaceChildren(...children.filter((c) => c !== null && c !== undefined));
  return node;
}

// ---- talking to the sandbox -------------------------------------------------------------------

/** The path of an `api/` route of the mailbox on show (every route but the mailbox list and the stream). */
function box(path) {
  if (view.mailbox === 'default' || path === 'api/mailboxes' || path === 'api/stream') return path;
  return `${path}${path.includes('?') ? '&' : '?'}mailbox=${encodeURIComponent(view.mailbox)}`;
}

async function api(path, init) {
  let res;
  try {
    res = await fetch(box(path), { cache: 'no-store', ...init });
  } catch {
    throw new Error(
      'The sandbox does not answer. Is it still running? Start it again (EmailSandbox.start() or npm run sandbox) and reload this page.',
    );
  }
  const body = (res.headers.get('content-type') || '').includes('json') ? await res.json() : null;
  if (!res.ok) {
    const err = new Error((body && body.error) || `The sandbox answered HTTP ${res.status}.`);
    err.status = res.status;
    throw err;
  }
  return body;
}

const post = (path, body) =>
  api(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body || {}),
  });

function banner(message) {
  const node = $('banner');
  node.hidden = !message;
  node.textContent = message || '';
}

/** Runs a button's action; a failure is shown in the banner, and the page is refreshed either way. */
async function act(action) {
  try {
    await action();
    banner('');
  } catch (err) {
    banner(err.message);
  }
  refresh();
}

// ---- formatting -------------------------------------------------------------------------------

const KNOWN = ['sent', 'scheduled', 'failed', 'bounced', 'complained', 'canceled'];
const statusBadge = (status) =>
  el('span', { class: `status status-${KNOWN.includes(status) ? status : 'other'}`, text: status });

/** A date-time in full, with the date and the time zone offset, e.g. `2026-11-23 19:22:05 UTC+1`. */
function when(iso) {
  if (!iso) return '–';
  const d = new Date(iso);
  const pad = (n) => String(n).padStart(2, '0');
  const off = -d.getTimezoneOffset();
  const zone =
    off === 0
      ? 'UTC'
      : `UTC${off > 0 ? '+' : '-'}${Math.floor(Math.abs(off) / 60)}${Math.abs(off) % 60 ? `:${pad(Math.abs(off) % 60)}` : ''}`;
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())} ${zone}`;
}

function bytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(2)} MiB`;
}

const plural = (n, word) => `${n.toLocaleString()} ${word}${n === 1 ? '' : 's'}`;

// ---- the list ---------------------------------------------------------------------------------

function row(m) {
  const to = m.toAddresses[0] + (m.toAddresses.length > 1 ? ` +${m.toAddresses.length - 1}` : '');
  const extras = [];
  if (m.openCount) extras.push(el('span', { class: 'tag', text: `${m.openCount} open` }));
  if (m.clickCount) extras.push(el('span', { class: 'tag', text: `${m.clickCount} click` }));
  if (m.attachments) extras.push(el('span', { class: 'tag', text: plural(m.attachments, 'file') }));
  if (m.account) extras.push(el('span', { class: 'tag tag-account', text: m.account }));
  for (const t of m.tags) extras.push(el('span', { class: 'tag tag-label', text: t }));
  return el(
    'li',
    { class: `item${m.read ? '' : ' unread'}${m.id === view.cursor ? ' cursor' : ''}`, 'data-id': m.id },
    el('input', {
      type: 'checkbox',
      class: 'pick',
      'aria-label': `Select message ${m.id}`,
      checked: view.checked.has(m.id),
      onchange: (e) => tick(m.id, e.target.checked),
    }),
    el(
      'a',
      {
        class: 'row',
        href: `#${m.id}`,
        'data-id': m.id,
        'aria-current': m.id === view.selected ? 'true' : null,
        title: m.read ? null : 'Unread',
      },
      el(
        'span',
        { class: 'row-line' },
        el('span', { class: 'from', text: m.fromAddress }),
        el('time', {
          class: 'when',
          datetime: m.createdAt,
          title: m.createdAt,
          text: when(m.createdAt),
        }),
      ),
      el('span', { class: 'subject', text: m.subject }),
      el(
        'span',
        { class: 'row-line' },
        el('span', { class: 'to', text: `to ${to}` }),
        el('span', { class: 'tags' }, ...extras, statusBadge(m.status)),
      ),
    ),
  );
}

function emptyList(page, baseUrl) {
  if (page.total === 0) {
    return [
      el('p', {}, el('strong', { text: 'No messages yet.' })),
      el('p', {
        text: `Point your app at EMAIL_BASE_URL=${baseUrl || 'the sandbox URL'} with the sandbox's API key and send one: it shows up here as it arrives, no reload needed.`,
      }),
    ];
  }
  return [
    el('p', {}, el('strong', { text: `No message matches “${view.q}”.` })),
    el(
      'p',
      {
        text: 'Words look in senders, recipients, subjects and text bodies, and every word must match (the ? beside the box lists the search words). ',
      },
      el('button', { type: 'button', text: 'Clear the search', onclick: () => search('') }),
    ),
  ];
}

function renderList(page, baseUrl) {
  view.items = page.items;
  const count = view.q
    ? `${plural(page.matched, 'message')} of ${page.total.toLocaleString()} match`
    : plural(page.total, 'message');
  $('count').textContent = count + (page.total ? ', newest first' : '');
  $('summary').textContent =
    plural(page.total, 'message') + (page.unread ? `, ${page.unread.toLocaleString()} unread` : '');
  const shown = new Set(page.items.map((m) => m.id));
  for (const id of [...view.checked]) if (!shown.has(id)) view.checked.delete(id);
  if (view.cursor !== null && !shown.has(view.cursor)) view.cursor = null;
  renderProblems(page.problems || []);
  renderFilters(page.facets);
  fill('list', ...page.items.map(row));
  const empty = page.items.length === 0;
  $('empty').hidden = !empty;
  if (empty) fill('empty', ...emptyList(page, baseUrl));
  $('more').hidden = !page.more;
  renderSelection();
}

// ---- several messages at once: ticks, read/unread, delete ------------------------------------

function tick(id, on) {
  if (on) view.checked.add(id);
  else view.checked.delete(id);
  const box = document.querySelector(`.item[data-id="${id}"] .pick`);
  if (box) box.checked = on;
  renderSelection();
}

function renderSelection() {
  const n = view.checked.size;
  const all = $('pick-all');
  all.checked = n > 0 && n === view.items.length;
  all.indeterminate = n > 0 && n < view.items.length;
  $('selection').hidden = n === 0;
  $('selected-count').textContent = `${n} selected`;
}

/** The messages an action is for: the ticked ones, else the one open (or under the keyboard's cursor). */
function targets() {
  if (view.checked.size) return [...view.checked];
  const id = view.selected ?? view.cursor;
  return id === null ? [] : [id];
}

function markRead(ids, read) {
  if (!ids.length) return;
  act(() => post('api/messages/read', { ids, read }));
}

function deleteMessages(ids) {
  if (!ids.length) return;
  act(async () => {
    await post('api/messages/delete', { ids });
    for (const id of ids) view.checked.delete(id);
    if (ids.includes(view.selected)) {
      history.pushState(null, '', location.pathname + location.search);
      select(null);
    }
  });
}

/** Deletes the message open, after asking (the Delete message button and the Delete key alike). */
function deleteOpen(id) {
  if (!confirm(`Delete message ${id} from the ${view.mailbox} mailbox?`)) return;
  act(async () => {
    await post(`api/messages/${id}/delete`);
    view.checked.delete(id);
    history.pushState(null, '', location.pathname + location.search);
    select(null);
  });
}

/**
 * The Delete key: the ticked rows without a question, as the selection's Delete button does (they were
 * picked one by one); otherwise the message open, or the row under the cursor, after asking, as the
 * Delete message button does.
 */
function deleteKey() {
  if (view.checked.size) deleteMessages([...view.checked]);
  else if (view.selected !== null) deleteOpen(view.selected);
  else if (view.cursor !== null) deleteOpen(view.cursor);
}

async function loadOlder() {
  const last = view.items[view.items.length - 1];
  const params = new URLSearchParams({ limit: String(PAGE), before: String(last.id) });
  if (view.q) setSearch(params);
  const page = await api(`api/messages?${params}`);
  view.items = view.items.concat(page.items);
  view.loaded = Math.min(500, view.items.length);
  $('list').append(...page.items.map(row));
  $('more').hidden = !page.more;
}

function search(q) {
  $('search').value = q;
  view.q = q.trim();
  view.loaded = PAGE;
  refresh();
}

/** The search and the page's time zone (minutes east of UTC), in which the sandbox reads dates such as after:2026-11-23. */
function setSearch(params) {
  params.set('q', view.q);
  params.set('tz', String(-new Date().getTimezoneOffset()));
}

// ---- search words and filters -----------------------------------------------------------------

/** A search word's value as the box needs it: quoted when it holds a space or a quote. */
const quoted = (value) => (/[\s"]/.test(value) ? `"${value.replace(/"/g, '')}"` : value);

/** The value of the (not negated) `field:` word of the search, or ''. */
function wordValue(q, field) {
  const m = new RegExp(`(?:^|\\s)${field}:(?:"([^"]*)"?|(\\S+))`, 'i').exec(q);
  return m ? (m[1] ?? m[2]) : '';
}

/** The search with its `field:` word replaced by `field:value` (removed for ''). */
function withWord(q, field, value) {
  const rest = q.replace(new RegExp(`(^|\\s)${field}:(?:"[^"]*"?|\\S+)`, 'gi'), ' ').trim();
  return value === '' ? rest : `${rest} ${field}:${quoted(value)}`.trim();
}

function renderProblems(problems) {
  const node = $('search-problems');
  node.hidden = problems.length === 0;
  node.textContent = problems.length ? `Left out of the search: ${problems.join('; ')}.` : '';
}

/** The filters: account, template and job, each shown when the mailbox's messages have such values. */
function renderFilters(facets) {
  const lists = {
    account: facets ? facets.accounts : [],
    template: facets ? facets.templates.map(String) : [],
    job: facets ? facets.jobs : [],
  };
  let any = false;
  for (const [field, values] of Object.entries(lists)) {
    const current = wordValue(view.q, field);
    const shown = values.length > 0 || current !== '';
    any ||= shown;
    document.querySelector(`[data-filter="${field}"]`).hidden = !shown;
    const all = current && !values.includes(current) ? [current, ...values] : values;
    const label = (v) => (field === 'template' ? `template ${v}` : v);
    const select = $(`filter-${field}`);
    fill(
      select,
      el('option', { value: '', text: 'any' }),
      ...all.map((v) => el('option', { value: v, text: label(v), selected: v === current })),
    );
    select.value = current;
  }
  $('filters').hidden = !any;
}

function filterBy(field, value) {
  search(withWord(view.q, field, value));
}

// ---- one message ------------------------------------------------------------------------------

function meta(m) {
  const pairs = [
    ['From', m.fromAddress],
    ['To', m.toAddresses.join(', ')],
    ['Status', el('span', {}, statusBadge(m.status), m.errorMessage ? ` ${m.errorMessage}` : null)],
    ['Created', when(m.createdAt)],
    ['Updated', when(m.updatedAt)],
    ['ID', `${m.id}${m.providerEmailId ? ` · provider ${m.providerEmailId}` : ''}`],
  ];
  if (m.account) pairs.push(['Account', m.account]);
  if (m.tags.length)
    pairs.push([
      'Tags',
      el('span', { class: 'tags' }, ...m.tags.map((t) => el('span', { class: 'tag', text: t }))),
    ]);
  return pairs.flatMap(([k, v]) => [el('dt', { text: k }), el('dd', {}, v)]);
}

function tracking(m) {
  const t = m.tracking;
  const counters = el(
    'p',
    { class: 'counters' },
    el(
      'span',
      {},
      el('strong', { text: String(m.openCount) }),
      ` ${m.openCount === 1 ? 'open' : 'opens'}`,
      m.openedAt ? ` · first ${when(m.openedAt)}` : '',
    ),
    el(
      'span',
      {},
      el('strong', { text: String(m.clickCount) }),
      ` ${m.clickCount === 1 ? 'click' : 'clicks'}`,
      m.clickedAt ? ` · first ${when(m.clickedAt)}` : '',
    ),
  );
  const links = el(
    'select',
    { id: 'link', 'aria-label': 'Link to click', disabled: !!t.click },
    ...t.links.map((url) => el('option', { value: url, text: url })),
  );
  const actions = el(
    'div',
    { class: 'buttons' },
    el('button', {
      type: 'button',
      id: 'record-open',
      disabled: !!t.open,
      title: t.open,
      text: 'Record an open',
      onclick: () => act(() => post(`api/messages/${m.id}/open`)),
    }),
    t.links.length ? links : null,
    el('button', {
      type: 'button',
      id: 'record-click',
      disabled: !!t.click,
      title: t.click,
      text: 'Record a click',
      onclick: () => act(() => post(`api/messages/${m.id}/click`, { url: links.value })),
    }),
  );
  const why = [...new Set([t.open, t.click])]
    .filter(Boolean)
    .map((reason) => el('p', { class: 'hint', text: `Not recordable: ${reason}.` }));
  const events = m.events.length
    ? el(
        'table',
        { class: 'events' },
        el(
          'thead',
          {},
          el('tr', {}, el('th', { text: 'Event' }), el('th', { text: 'Link' }), el('th', { text: 'When' })),
        ),
        el(
          'tbody',
          {},
          ...m.events.map((e) =>
            el(
              'tr',
              {},
              el('td', { text: e.type }),
              el('td', { class: 'url', text: e.url || '–' }),
              el('td', { text: when(e.occurredAt) }),
            ),
          ),
        ),
      )
    : el('p', { class: 'muted', id: 'no-events', text: noEvents(t) });
  return [counters, actions, ...why, events];
}

/** What the tracking card says before any event: what can record one, if anything can. */
function noEvents(t) {
  if (t.open && t.click)
    return 'No opens or clicks: none can be recorded for this message (the reason is above).';
  if (t.open) return 'No clicks yet. Record one with the button, or follow a tracked link of the html.';
  if (t.click) return 'No opens yet. Record one with the button, or fetch the tracking pixel of the html.';
  return 'No opens or clicks yet. Use the buttons, or fetch the tracking links in the html.';
}

const FRAME_HINT = {
  false:
    'Shown in a sandboxed frame: no script, no forms, no network (remote images stay blank, and viewing never counts as an open).',
  true: 'Remote images on: images load from any http(s) address (their servers see a request from this machine). Still no script, no forms, no popups, no remote styles or fonts; the sandbox’s own open pixel is left out, so viewing never counts as an open.',
};

function htmlToolbar(m) {
  const choice = (group, value, label, current, onPick) =>
    el('button', {
      type: 'button',
      class: 'choice',
      'data-group': group,
      'data-value': value,
      'aria-pressed': String(current === value),
      text: label,
      onclick: () => onPick(value),
    });
  const setView = (v) => {
    view.htmlView = v;
    view.htmlFor = null;
    renderHtml(m);
  };
  const setWidth = (w) => {
    view.width = w;
    view.htmlFor = null;
    renderHtml(m);
  };
  return el(
    'div',
    { class: 'toolbar' },
    el(
      'span',
      { class: 'buttons', role: 'group', 'aria-label': 'Show the html' },
      choice('view', 'rendered', 'Rendered', view.htmlView, setView),
      choice('view', 'source', 'Source', view.htmlView, setView),
      choice('view', 'check', 'Check', view.htmlView, setView),
    ),
    // width and images apply to the rendered view only: not shown (nor pressed) with the source or the check
    view.htmlView !== 'rendered'
      ? null
      : el(
          'span',
          { class: 'buttons', role: 'group', 'aria-label': 'Preview width' },
          choice('width', 'full', 'Full width', view.width, setWidth),
          choice('width', 'tablet', 'Tablet 768', view.width, setWidth),
          choice('width', 'phone', 'Phone 375', view.width, setWidth),
        ),
    view.htmlView !== 'rendered'
      ? null
      : el(
          'label',
          { class: 'toggle' },
          el('input', {
            type: 'checkbox',
            id: 'load-images',
            checked: view.images,
            onchange: (e) => {
              view.images = e.target.checked;
              view.htmlFor = null;
              renderHtml(m);
            },
          }),
          ' Load remote images',
        ),
  );
}

function htmlFrame(m) {
  if (!m.hasHtml) return [el('p', { class: 'muted', text: 'This message has no html body.' })];
  if (view.htmlView === 'source') {
    const pre = el('pre', { class: 'source', id: 'd-source', text: 'Loading the html source…' });
    api(`api/messages/${m.id}/raw`).then(
      (raw) => {
        pre.textContent = formatHtml(raw.html);
      },
      (err) => {
        pre.textContent = err.message;
      },
    );
    return [
      htmlToolbar(m),
      pre,
      el('p', {
        class: 'hint',
        text: 'The html as the sandbox holds it (tracking included), shown as text, one element a line.',
      }),
    ];
  }
  if (view.htmlView === 'check') {
    const out = el('div', { id: 'd-check', class: 'check' }, el('p', { class: 'muted', text: 'Checking…' }));
    api(`api/messages/${m.id}/check`).then(
      (c) => fill(out, ...checkReport(c)),
      (err) => fill(out, el('p', { text: err.message })),
    );
    return [htmlToolbar(m), out];
  }
  const width = WIDTHS[view.width];
  return [
    htmlToolbar(m),
    el(
      'div',
      { class: 'frame-wrap' },
      el('iframe', {
        sandbox: '',
        src: box(`api/messages/${m.id}/html${view.images ? '?images=1' : ''}`),
        title: `HTML body of message ${m.id}`,
        referrerpolicy: 'no-referrer',
        class: width ? `device device-${view.width}` : null,
      }),
    ),
    el('p', { class: 'hint', id: 'frame-hint', text: FRAME_HINT[view.images] }),
  ];
}

const VOID = new Set([
  'area',
  'base',
  'br',
  'col',
  'embed',
  'hr',
  'img',
  'input',
  'link',
  'meta',
  'source',
  'track',
  'wbr',
]);
const INLINE = new Set([
  'a',
  'b',
  'i',
  'em',
  'strong',
  'span',
  'u',
  'small',
  'sup',
  'sub',
  'code',
  'font',
  'br',
  'img',
]);

/** The html source laid out one block element a line, indented by depth (text only: never parsed into the page). */
function formatHtml(html) {
  // a comment, a whole script/style/title element, a tag, text (or a lone '<')
  const TOKENS =
    /<!--[\s\S]*?-->|<(?:script|style|title)\b[\s\S]*?<\/(?:script|style|title)\s*>|<[^>]+>|[^<]+|</gi;
  const parts = (String(html).match(TOKENS) || []).filter((p) => p.trim() !== '');
  const lines = [];
  let depth = 0;
  let line = '';
  const indent = () => '  '.repeat(Math.max(depth, 0));
  const flush = () => {
    if (line.trim()) lines.push(indent() + line.trim());
    line = '';
  };
  for (const part of parts) {
    const tag = /^<(\/?)([a-zA-Z][\w-]*)/.exec(part);
    if (!tag || INLINE.has(tag[2].toLowerCase())) {
      line += part.startsWith('<') ? part : part.replace(/\s+/g, ' ');
      continue;
    }
    flush();
    const whole = /^<(script|style|title)\b/i.test(part); // opened and closed in this one part
    if (tag[1]) depth--;
    lines.push(indent() + part);
    if (!tag[1] && !whole && !VOID.has(tag[2].toLowerCase()) && !part.endsWith('/>')) depth++;
  }
  flush();
  return lines.join('\n');
}

/** The check of the html, read at a glance: one line of counts, then each finding with its tag. */
function checkReport(c) {
  const size = `${bytes(c.bytes)} of html (Gmail clips past ${bytes(c.clipBytes)})`;
  const badge = (n, word, level) =>
    el('span', { class: `level level-${n ? level : 'ok'}`, text: plural(n, word) });
  const counts = el(
    'p',
    { class: 'check-summary' },
    badge(c.errors, 'problem', 'error'),
    ' ',
    badge(c.warnings, 'warning', 'warn'),
    ` · ${plural(c.links, 'link')} · ${plural(c.images, 'image')} · ${size}`,
  );
  if (!c.findings.length)
    return [
      counts,
      el('p', {
        class: 'muted',
        text: 'Nothing to fix: every link goes somewhere, every image has alt and a size, no markup a mail client drops.',
      }),
    ];
  const LABEL = { link: 'Link', anchor: 'Anchor', image: 'Image', markup: 'Markup', size: 'Size' };
  const line = (f) =>
    el(
      'tr',
      { class: `finding finding-${f.level}` },
      el(
        'td',
        {},
        el('span', { class: `level level-${f.level}`, text: f.level === 'error' ? 'problem' : 'warning' }),
      ),
      el('th', { scope: 'row', text: LABEL[f.kind] || f.kind }),
      el(
        'td',
        {},
        el('span', { class: 'finding-text', text: f.message }),
        f.excerpt ? el('code', { class: 'excerpt', text: f.excerpt }) : null,
      ),
    );
  return [counts, el('table', { class: 'findings' }, el('tbody', {}, ...c.findings.map(line)))];
}

function renderHtml(m) {
  if (view.htmlFor === m.id) return;
  view.htmlFor = m.id;
  fill('d-html', ...htmlFrame(m));
}

function rawRequest(m) {
  const pre = el('pre', { class: 'source', id: 'd-raw-json', text: 'Loading the request…' });
  api(`api/messages/${m.id}/raw`).then(
    (raw) => {
      const r = raw.request;
      if (!r) {
        pre.textContent =
          'The request of this message was not kept (it was restored from the data directory).';
        return;
      }
      let body = r.body;
      try {
        body = JSON.stringify(JSON.parse(r.body), null, 2);
      } catch {
        // cut short or not JSON: shown as received
      }
      const head = [
        `${r.method} ${r.path}${r.batchItem === null ? '' : `  (item ${r.batchItem} of the batch)`}`,
        'Authorization: Bearer ***',
        r.idempotencyKey ? `Idempotency-Key: ${r.idempotencyKey}` : null,
      ].filter(Boolean);
      pre.textContent = `${head.join('\n')}\n\n${body}${r.truncated ? '\n… (cut at 64 KiB)' : ''}`;
    },
    (err) => {
      pre.textContent = err.message;
    },
  );
  return [pre];
}

function attachments(m) {
  if (!m.attachments.length) return [el('p', { class: 'muted', text: 'No attachments.' })];
  return [
    el(
      'ul',
      { class: 'files' },
      ...m.attachments.map((a) =>
        el(
          'li',
          {},
          a.kept
            ? el('a', {
                href: box(`api/messages/${m.id}/attachments/${a.index}`),
                download: a.filename,
                text: a.filename,
              })
            : el('span', { text: a.filename }),
          el('span', {
            class: 'muted',
            text: ` ${bytes(a.size)} · ${a.contentType || 'no content type'}${a.kept ? '' : ' · content no longer kept'}`,
          }),
        ),
      ),
    ),
  ];
}

function template(m) {
  if (m.templateId === null) return [el('p', { class: 'muted', text: 'Composed inline (no template).' })];
  const vars = Object.entries(m.variables || {});
  return [
    el('p', { text: `Template ${m.templateId}` }),
    vars.length
      ? el(
          'table',
          { class: 'vars' },
          el(
            'tbody',
            {},
            ...vars.map(([k, v]) => el('tr', {}, el('th', { text: k }), el('td', { text: v }))),
          ),
        )
      : el('p', { class: 'muted', text: 'No variables.' }),
  ];
}

function schedule(m) {
  if (!m.scheduledAt) return [el('p', { class: 'muted', text: 'Not scheduled: sent at once.' })];
  if (m.status !== 'scheduled' || !m.dueAt)
    return [
      el('p', { text: `Was scheduled for ${when(m.scheduledAt)}; sent when the sandbox clock reached it.` }),
    ];
  return [
    el('p', { text: `Scheduled for ${when(m.scheduledAt)} (sandbox clock).` }),
    el('button', {
      type: 'button',
      id: 'send-due',
      text: 'Move the clock there (sends it)',
      onclick: () => act(() => post('api/clock', { to: m.dueAt })),
    }),
  ];
}

function renderDetail(m) {
  $('detail').hidden = false;
  $('detail-empty').hidden = true;
  $('d-error').hidden = true;
  $('d-subject').textContent = m.subject;
  fill('d-meta', ...meta(m));
  fill('d-tracking', ...tracking(m));
  if (view.htmlFor !== m.id) {
    fill('d-raw', ...rawRequest(m));
    $('delete').onclick = () => deleteOpen(m.id);
    $('mark-unread').onclick = () => {
      view.unreadHeld = m.id; // stays unread while it is open; opening it again marks it read
      markRead([m.id], false);
    };
  }
  renderHtml(m);
  fill(
    'd-text',
    m.bodyText === null
      ? el('p', { class: 'muted', text: 'No text body.' })
      : el('pre', { class: 'text', text: m.bodyText }),
  );
  fill('d-attachments', ...attachments(m));
  fill('d-template', ...template(m));
  fill('d-schedule', ...schedule(m));
}

function detailGone(id, message) {
  view.htmlFor = null;
  $('detail').hidden = true;
  fill(
    'detail-empty',
    el('p', {}, el('strong', { text: `Message ${id} is gone.` })),
    el('p', { text: `${message}. Pick another message from the list.` }),
  );
  $('detail-empty').hidden = false;
}

function select(id) {
  if (id !== view.selected) view.unreadHeld = null;
  view.selected = id;
  document.body.classList.toggle('viewing', id !== null);
  for (const a of document.querySelectorAll('.row')) {
    if (Number(a.dataset.id) === id) a.setAttribute('aria-current', 'true');
    else a.removeAttribute('aria-current');
  }
  if (id === null) {
    view.htmlFor = null;
    $('detail').hidden = true;
    fill(
      'detail-empty',
      el(
        'p',
        {},
        el('strong', { text: 'Pick a message' }),
        ' to see its html, text, attachments and events.',
      ),
    );
    $('detail-empty').hidden = false;
  }
  refresh();
}

// ---- clock and faults -------------------------------------------------------------------------

function describeFault(f) {
  const what =
    f.mode === 'status' || f.mode === 'fail-after'
      ? `${f.mode} ${f.status}`
      : f.mode === 'delay'
        ? `delay ${f.ms} ms`
        : f.mode;
  const where = f.route === '*' ? 'every route' : f.route.join(', ');
  const left = f.remaining === null ? 'every request' : `${f.remaining} left`;
  return `${what} on ${where} · ${left} · hit ${f.hits}`;
}

function renderState(s) {
  view.offsetMs = Date.parse(s.now) - Date.now();
  tickClock();
  const rules = s.faults.rules.map((f) => el('li', { text: describeFault(f) }));
  if (s.faults.random)
    rules.push(
      el('li', {
        text: `random faults on ${Math.round(s.faults.random.probability * 100)}% of requests (seed ${s.faults.random.seed ?? 1})`,
      }),
    );
  fill(
    'faults',
    ...(rules.length
      ? rules
      : [el('li', { class: 'muted', text: 'No fault injected: every request is answered normally.' })]),
  );
  const badge = $('fault-badge');
  badge.hidden = rules.length === 0;
  badge.textContent = `${rules.length} active`;
  renderBounces(s.bounces);
  return s.baseUrl;
}

function renderBounces(bounces) {
  const items = bounces.map((b) => {
    const remove = el('button', { type: 'button', class: 'small', text: 'Remove' });
    remove.addEventListener('click', () => act(() => post('api/bounces/remove', { address: b.address })));
    return el('li', {}, `${b.address} · ${b.status} `, remove);
  });
  fill(
    'bounces',
    ...(items.length
      ? items
      : [el('li', { class: 'muted', text: 'No address bounces or complains: every record reads sent.' })]),
  );
  const badge = $('bounce-badge');
  badge.hidden = items.length === 0;
  badge.textContent = `${plural(items.length, 'bounce')}`;
}

function bounceForm(event) {
  event.preventDefault();
  const f = new FormData(event.target);
  const body = { address: f.get('address'), status: f.get('status'), existing: f.get('existing') === 'on' };
  act(async () => {
    await post('api/bounces', body);
    event.target.reset();
  });
}

function tickClock() {
  const now = new Date(Date.now() + view.offsetMs);
  $('clock').textContent = when(now.toISOString());
  $('clock').setAttribute('datetime', now.toISOString());
}

function faultForm(event) {
  event.preventDefault();
  const f = new FormData(event.target);
  const mode = f.get('mode');
  const rule = {
    route: f.get('route'),
    mode,
    times: f.get('times') === 'all' ? 'all' : Number(f.get('times')),
  };
  if (mode === 'status' || mode === 'fail-after') rule.status = Number(f.get('status'));
  if (mode === 'fail-after' && rule.status === 429) rule.status = 500;
  if (mode === 'delay') rule.ms = Number(f.get('ms'));
  act(() => post('api/faults', rule));
}

function showFaultFields() {
  const mode = $('fault-form').elements.mode.value;
  for (const label of document.querySelectorAll('[data-for]'))
    label.hidden = !label.dataset.for.split(' ').includes(mode);
}

// ---- mailboxes --------------------------------------------------------------------------------

function renderMailboxes(boxes) {
  const picker = $('mailbox');
  $('mailbox-picker').hidden = boxes.length < 2 && view.mailbox === 'default';
  const names = boxes.map((b) => b.name);
  if (!names.includes(view.mailbox)) names.push(view.mailbox);
  const options = names.map((name) => {
    const found = boxes.find((b) => b.name === name);
    const label = found ? `${name} (${plural(found.messages, 'message')})` : `${name} (closed)`;
    return el('option', { value: name, text: label, selected: name === view.mailbox });
  });
  fill(picker, ...options);
  picker.value = view.mailbox;
}

function switchMailbox(name) {
  view.mailbox = name;
  const params = new URLSearchParams(location.search);
  if (name === 'default') params.delete('mailbox');
  else params.set('mailbox', name);
  const query = params.toString();
  history.pushState(null, '', `${location.pathname}${query ? `?${query}` : ''}`);
  search('');
  select(null);
}

// ---- refreshing -------------------------------------------------------------------------------

let running = false;
let again = false;

/** Reloads the list, the sandbox state and the open message; calls during a reload coalesce into one more. */
async function refresh() {
  if (running) {
    again = true;
    return;
  }
  running = true;
  try {
    const seq = ++view.seq;
    const params = new URLSearchParams({ limit: String(view.loaded) });
    if (view.q) setSearch(params);
    const [page, state, boxes] = await Promise.all([
      api(`api/messages?${params}`),
      api('api/state'),
      api('api/mailboxes'),
    ]);
    if (seq === view.seq) {
      renderMailboxes(boxes);
      renderList(page, renderState(state));
    }
    if (view.selected !== null) await refreshDetail(view.selected);
  } catch (err) {
    banner(err.message);
  } finally {
    running = false;
    if (again) {
      again = false;
      refresh();
    }
  }
}

async function refreshDetail(id) {
  try {
    const m = await api(`api/messages/${id}`);
    if (view.selected === id) renderDetail(m);
    const item = view.items.find((x) => x.id === id);
    if (view.selected === id && item && !item.read && view.unreadHeld !== id) {
      item.read = true;
      await post('api/messages/read', { ids: [id], read: true });
    }
  } catch (err) {
    if (err.status !== 404 && err.status !== 400) throw err;
    if (view.selected === id) detailGone(id, err.message);
  }
}

function listen() {
  const events = new EventSource('api/stream');
  events.addEventListener('change', () => {
    banner('');
    refresh();
  });
  events.onerror = () => banner('Lost the live connection to the sandbox; retrying… (is it still running?)');
}

/** Moves the keyboard's cursor `step` rows (j: +1, k: -1) and shows where it is. */
function moveCursor(step) {
  if (!view.items.length) return;
  const from = view.items.findIndex((m) => m.id === (view.cursor ?? view.selected));
  const last = view.items.length - 1;
  const to = from < 0 ? (step > 0 ? 0 : last) : Math.min(Math.max(from + step, 0), last);
  view.cursor = view.items[to].id;
  for (const li of document.querySelectorAll('.item'))
    li.classList.toggle('cursor', Number(li.dataset.id) === view.cursor);
  document.querySelector(`.item[data-id="${view.cursor}"]`)?.scrollIntoView({ block: 'nearest' });
}

/** j/k: next/previous row; Enter: open it; x: tick it; Delete: delete the ticked (or open) ones; /: search; Esc: back. */
function keyboard(e) {
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  const t = e.target;
  if (/^(INPUT|SELECT|TEXTAREA)$/.test(t.tagName) && t.type !== 'checkbox') {
    if (e.key === 'Escape') t.blur();
    return;
  }
  if (e.key === 'Enter' && /^(A|BUTTON|SUMMARY)$/.test(t.tagName)) return; // the focused control's own Enter
  if (e.key === 'j' || e.key === 'k') moveCursor(e.key === 'j' ? 1 : -1);
  else if (e.key === 'Enter' && view.cursor !== null) location.hash = `#${view.cursor}`;
  else if (e.key === 'x' && view.cursor !== null) tick(view.cursor, !view.checked.has(view.cursor));
  else if (e.key === 'Delete') deleteKey();
  else if (e.key === '/') $('search').focus();
  else if (e.key === 'Escape' && view.selected !== null) $('back').click();
  else return;
  e.preventDefault();
}

function fromHash() {
  const id = Number(location.hash.slice(1));
  select(Number.isInteger(id) && id > 0 ? id : null);
}

function start() {
  let timer;
  $('search').addEventListener('input', (e) => {
    clearTimeout(timer);
    timer = setTimeout(() => search(e.target.value), 150);
  });
  $('more').addEventListener('click', () => loadOlder().catch((err) => banner(err.message)));
  for (const field of ['account', 'template', 'job'])
    $(`filter-${field}`).addEventListener('change', (e) => filterBy(field, e.target.value));
  for (const code of document.querySelectorAll('#search-help [data-word]')) {
    code.addEventListener('click', () => {
      const word = code.dataset.word;
      const box = $('search');
      const next = `${box.value.trim()} ${word}`.trim();
      box.value = next;
      box.focus();
      // inside quotes when the word ends with them, else after the colon
      const at = word.endsWith('""') ? next.length - 1 : next.length;
      box.setSelectionRange(at, at);
      if (/[^:"-]$/.test(word)) search(next);
    });
  }
  $('back').addEventListener('click', () => {
    // keeps ?mailbox=: a later #id link fires popstate, which reads the mailbox from the address
    history.pushState(null, '', location.pathname + location.search);
    select(null);
  });
  for (const b of document.querySelectorAll('[data-advance]')) {
    b.addEventListener('click', () => act(() => post('api/clock', { advanceMs: Number(b.dataset.advance) })));
  }
  $('fault-form').addEventListener('submit', faultForm);
  $('fault-form').elements.mode.addEventListener('change', showFaultFields);
  $('clear-faults').addEventListener('click', () => act(() => post('api/faults/clear')));
  $('bounce-form').addEventListener('submit', bounceForm);
  $('clear-list').addEventListener('click', () => {
    if (!confirm(`Clear every message of the ${view.mailbox} mailbox from the list? Ids go on counting.`))
      return;
    act(async () => {
      await post('api/messages/clear');
      select(null);
    });
  });
  $('reset').addEventListener('click', () => {
    const ok = confirm(
      `Reset the ${view.mailbox} mailbox? Every message, idempotency key, quota window and fault is forgotten and the clock restarts.`,
    );
    if (ok) act(() => post('api/reset'));
  });
  $('mailbox').addEventListener('change', (e) => switchMailbox(e.target.value));
  $('pick-all').addEventListener('change', (e) => {
    view.checked = e.target.checked ? new Set(view.items.map((m) => m.id)) : new Set();
    for (const box of document.querySelectorAll('.pick')) box.checked = e.target.checked;
    renderSelection();
  });
  $('mark-read').addEventListener('click', () => markRead(targets(), true));
  $('mark-unread-selected').addEventListener('click', () => markRead(targets(), false));
  $('delete-selected').addEventListener('click', () => deleteMessages(targets()));
  document.addEventListener('keydown', keyboard);
  window.addEventListener('popstate', () => {
    view.mailbox = new URLSearchParams(location.search).get('mailbox') || 'default';
    fromHash();
  });
  window.addEventListener('hashchange', fromHash);
  setInterval(tickClock, 1000);
  showFaultFields();
  listen();
  fromHash();
}

start();
