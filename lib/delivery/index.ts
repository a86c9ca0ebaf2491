export { IDEMPOTENCY_KEY_PATTERN, generateIdempotencyKey, isValidIdempotencyKey } from './idempotency-key.js';
