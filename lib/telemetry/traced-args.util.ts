import { ATTR } from './email-telemetry.constants.js';
import type { TracedArgs } from './traced.decorator.js';

/** `get(id)` / `listEvents(id)`: the message id. */
export const idSpan: TracedArgs = ([id]) =>
  Number.isSafeInteger(id) ? { attributes: { [ATTR.messageId]: id as number } } : {};

/** `sendBatch(items)`: how many messages (never what they hold). */
export const batchSpan: TracedArgs = ([items]) => {
  const size = Array.isArray(items) ? items.length : 1;
  return { attributes: { [ATTR.batchSize]: size }, size };
};
