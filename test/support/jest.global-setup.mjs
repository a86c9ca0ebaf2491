// Jest's global set-up: one work directory per run for the consumer specs (test/consumer/), shared by
// the spec files on both workers (they inherit EMAIL_CONSUMER_DIR) and removed by the tear-down.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function globalSetup() {
  process.env.EMAIL_CONSUMER_DIR = mkdtempSync(join(tmpdir(), 'nte-consumer-'));
}
