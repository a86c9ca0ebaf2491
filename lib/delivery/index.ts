export {
  IDEMPOTENCY_KEY_PATTERN,
  generateIdempotencyKey,
  isValidIdempotencyKey,
} from './idempotency-key.rules.js';
export { FIND_SENT_SKEW_MS } from './find-sent.matcher.js';
