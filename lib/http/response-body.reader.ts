import type { Dispatcher } from 'undici';
import { EmailUnexpectedResponseError } from '../errors/email-transport.error.js';

/**
 * Reads a response body as UTF-8 text, refusing (and discarding) one larger than `cap` bytes,
 * so that a broken or hostile server cannot exhaust memory.
 */
export async function readBody(
  res: Dispatcher.ResponseData,
  cap: number,
  ctx: { method: string; path: string },
): Promise<string> {
  const tooLarge = (): EmailUnexpectedResponseError => {
    res.body.destroy();
    return new EmailUnexpectedResponseError({
      ...ctx,
      status: res.statusCode,
      reason: `the body is larger than ${cap} bytes`,
      excerpt: '',
      outcome: ctx.method === 'POST' ? 'uncertain' : undefined,
    });
  };
  const declared = res.headers['content-length'];
  if (typeof declared === 'string') {
    if (Number(declared) > cap) throw tooLarge();
    return res.body.text();
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body) {
    size += (chunk as Buffer).length;
    if (size > cap) throw tooLarge();
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}
