import { SANDBOX_MAX_BATCH_ITEMS } from './sandbox.constants.js';
import { checkScheduling, checkSender } from './sandbox.auth.js';
import type { SandboxCore } from './sandbox.core.js';
import { SandboxHttpError, type SandboxReply } from './sandbox.http.js';
import { IDEMPOTENCY_KEY, requestHash } from './sandbox.idempotency.js';
import type { ResolvedSandboxKey } from './sandbox.options.js';
import { toLog } from './sandbox.records.js';
import { keptBytes, type StoredMessage } from './sandbox.store.js';
import type { RenderedTemplate } from './sandbox.templates.js';
import { instrument } from './sandbox.tracking.js';
import { validateSend, type ValidSend } from './sandbox.validation.js';

/** What a send handler needs from the request. */
export interface SendRequest {
  method: string;
  path: string;
  raw: Buffer;
  /** Parsed body; `undefined` when it was not JSON. */
  json: unknown;
  idempotencyKey: string | undefined;
}

interface Prepared {
  input: ValidSend;
  rendered: RenderedTemplate | null;
}

/** Validates one send and checks what the key allows; throws 400 / 403. */
function prepare(
  core: SandboxCore,
  key: ResolvedSandboxKey,
  body: unknown,
  single: boolean,
  now: number,
  at = '',
) {
  const input = validateSend(body, { single, rejectUnknown: core.rejectUnknown, now, at });
  checkSender(core, key, input.fromDomain, at);
  if (input.scheduledAt !== null) checkScheduling(key);
  const rendered =
    input.templateId === null ? null : core.templates.render(input.templateId, input.variables, at);
  return { input, rendered };
}

function create(
  core: SandboxCore,
  key: ResolvedSandboxKey,
  p: Prepared,
  now: number,
  attachments?: unknown,
): StoredMessage {
  const { input, rendered } = p;
  const html = rendered ? rendered.html : input.html;
  const trackOpens = input.trackOpens ?? key.trackOpens;
  const trackClicks = input.trackClicks ?? key.trackClicks;
  const stamp = new Date(now).toISOString();
  const at = input.scheduledAt;
  const msg = core.store.create({
    account: key.account,
    fromAddress: input.from,
    toAddresses: input.to,
    subject: rendered ? rendered.subject : (input.subject as string),
    scheduledAt: at === null ? null : new Date(at).toISOString(),
    dueAt: at !== null && at > now ? at : null,
    trackOpens,
    trackClicks,
    opensApply: trackOpens && html !== null,
    clicksApply: trackClicks && html !== null,
    createdAt: stamp,
    updatedAt: stamp,
    html,
    bodyText: rendered ? rendered.text : input.text,
  });
  instrument(msg, core.trackingBase);
  core.extras.keep(msg, input, html, attachments);
  // The html as sent is kept beside the record's only when tracking rewrote it (else one string).
  core.store.weigh(msg, html === msg.detail.html ? 0 : keptBytes(html));
  return msg;
}

/** POST /emails: validation, idempotency, quota, then one message record (201). */
export function sendOne(
  core: SandboxCore,
  key: ResolvedSandboxKey,
  req: SendRequest,
  now: number,
): SandboxReply {
  const idemKey = req.idempotencyKey;
  if (idemKey !== undefined && !IDEMPOTENCY_KEY.test(idemKey)) {
    throw new SandboxHttpError(400, 'Idempotency-Key must be 16 to 128 letters, digits, "_", ":" or "-"');
  }
  if (req.json === undefined) throw new SandboxHttpError(400, 'body must be valid JSON');
  const prepared = prepare(core, key, req.json, true, now);
  let hash = '';
  if (idemKey !== undefined) {
    hash = requestHash(req.method, req.path, req.raw);
    const existing = core.idempotency.lookup(core.idempotencyOwner(key), idemKey, hash, now);
    const earlier = existing === undefined ? undefined : core.store.get(existing, key.account);
    if (earlier) return { status: 201, body: toLog(earlier.detail) };
  }
  core.quota?.take(key.account, prepared.input.to.length, now);
  const msg = create(core, key, prepared, now, (req.json as { attachments?: unknown }).attachments);
  core.extras.keepRequest(
    msg,
    {
      method: req.method,
      path: req.path,
      idempotencyKey: idemKey ?? null,
      batchItem: null,
      body: req.raw.toString('utf8'),
    },
    req.json,
  );
  const finish =
    idemKey === undefined
      ? undefined
      : core.idempotency.reserve(core.idempotencyOwner(key), idemKey, hash, msg.detail.id, now);
  const body = toLog(msg.detail); // the answer says sent; the record reads bounced once the server refused it
  core.bounces.apply(msg, now);
  return { status: 201, body, finish };
}

/** POST /emails/batch: 1 to 100 items; an invalid item rejects the batch (or is skipped, if so configured). */
export function sendBatch(
  core: SandboxCore,
  key: ResolvedSandboxKey,
  req: SendRequest,
  now: number,
): SandboxReply {
  const items = req.json;
  if (items === undefined) throw new SandboxHttpError(400, 'body must be valid JSON');
  if (!Array.isArray(items) || items.length < 1 || items.length > SANDBOX_MAX_BATCH_ITEMS) {
    throw new SandboxHttpError(400, `body must be an array of 1 to ${SANDBOX_MAX_BATCH_ITEMS} emails`);
  }
  const accepted: Array<Prepared & { index: number }> = [];
  let firstError: unknown;
  let recipients = 0;
  for (let i = 0; i < items.length; i++) {
    try {
      const p = prepare(core, key, items[i], false, now, `[${i}].`);
      accepted.push({ ...p, index: i });
      recipients += p.input.to.length;
    } catch (err) {
      if (!core.skipInvalidBatchItems) throw err;
      firstError ??= err;
    }
  }
  if (accepted.length === 0) throw firstError;
  core.quota?.take(key.account, recipients, now);
  const data = accepted.map((p) => {
    const msg = create(core, key, p, now);
    const body = JSON.stringify(items[p.index]);
    core.extras.keepRequest(msg, {
      method: req.method,
      path: req.path,
      idempotencyKey: null,
      batchItem: p.index,
      body,
    });
    const log = toLog(msg.detail);
    core.bounces.apply(msg, now);
    return log;
  });
  return { status: 201, body: { data } };
}
