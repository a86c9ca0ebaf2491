import {
  MAX_ATTACHMENT_TOTAL_BYTES,
  MAX_ATTACHMENTS,
  MAX_BATCH_ITEMS,
  MAX_RECIPIENTS,
  MAX_SCHEDULE_AHEAD_MS,
} from '../../lib/validation/validation.constants.js';
import {
  SANDBOX_MAX_ATTACHMENT_BYTES,
  SANDBOX_MAX_ATTACHMENTS,
  SANDBOX_MAX_BATCH_ITEMS,
  SANDBOX_MAX_RECIPIENTS,
  SANDBOX_MAX_SCHEDULE_AHEAD_MS,
} from '../../lib/testing/sandbox.constants.js';

// The sandbox writes its limits from the service contract and the client from the same contract;
// they share no code (an emulator must not reuse what it checks), so this spec keeps them equal.
describe('the sandbox and the client agree on the service limits', () => {
  it.each([
    ['recipients', SANDBOX_MAX_RECIPIENTS, MAX_RECIPIENTS],
    ['batch items', SANDBOX_MAX_BATCH_ITEMS, MAX_BATCH_ITEMS],
    ['attachments', SANDBOX_MAX_ATTACHMENTS, MAX_ATTACHMENTS],
    ['attachment bytes', SANDBOX_MAX_ATTACHMENT_BYTES, MAX_ATTACHMENT_TOTAL_BYTES],
    ['schedule horizon', SANDBOX_MAX_SCHEDULE_AHEAD_MS, MAX_SCHEDULE_AHEAD_MS],
  ])('%s', (_what, sandbox, client) => {
    expect(sandbox).toBe(client);
  });

  it('the 1.3 MiB attachment limit is a whole number of bytes on both sides', () => {
    expect(Number.isInteger(SANDBOX_MAX_ATTACHMENT_BYTES)).toBe(true);
    expect(SANDBOX_MAX_ATTACHMENT_BYTES).toBe(1_363_148);
  });
});
