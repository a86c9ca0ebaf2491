// Jest's global set-up: one work directory per run for the consumer specs (test/consumer/), shared by
// the spec files on both workers (they inherit EMAIL_CONSUMER_DIR) and removed by the tear-down; and the
// run's mark (EMAIL_SUITE_RUN), inherited by every worker and every process a spec starts, by which the
// tear-down finds a process the run left behind.
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function globalSetup() {
  process.env.EMAIL_CONSUMER_DIR = mkdtempSync(join(tmpdir(), 'nte-consumer-'));
  process.env.EMAIL_SUITE_RUN = randomUUID();
}
