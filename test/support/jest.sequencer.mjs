// Jest's order of the spec files: the longest first, so that no worker is left with a long file at the end of
// the run while the others sit idle. Jest's own sequencer does that from its cache of the last run's durations;
// on a fresh clone (a CI machine) it has none and orders by file size, which starts the consumer specs (a pack,
// an install and two apps' test runs: the longest chain of the suite) among the last. Here a file without a
// duration in Jest's cache takes its estimate from SLOW_FILES, measured on a quiet machine; others their own
// duration, then the larger file first (Jest's own rule); files that failed last time still go first.
import { relative } from 'node:path';
import Sequencer from '@jest/test-sequencer';

/** Seconds a spec file takes alone on a quiet machine, for the files over about 10 s (issue 53's figures). */
const SLOW_FILES = {
  'test/consumer/consumer.nest11.spec.ts': 66,
  'test/consumer/consumer.nest12.spec.ts': 66,
  'test/outbox/outbox.tx-matrix.spec.ts': 46,
  'test/sandbox-page/page.search.chromium.spec.ts': 37,
  'test/jobs/jobs.cancel.spec.ts': 35,
  'test/jobs/jobs.cancel-race.property.spec.ts': 35,
  'test/jobs/jobs.rate-limit-storm.spec.ts': 33,
  'test/queue/queue.on-cluster.spec.ts': 31,
  'test/jobs/jobs.frozen-store.spec.ts': 31,
  'test/sample/sample.tour.e2e.spec.ts': 30,
  'test/docs/check-snippets.spec.ts': 27,
  'test/suppression/suppression.postgres.spec.ts': 27,
  'test/accounts/accounts.jobs.spec.ts': 26,
  'test/delivery/rate-limit.processes.spec.ts': 26,
  'test/queue/queue.cluster.spec.ts': 25,
  'test/delivery/rate-limit.cluster.spec.ts': 25,
  'test/outbox/outbox.processes.spec.ts': 23,
  'test/accounts/accounts.line.spec.ts': 22,
  'test/core/linked-list.spec.ts': 22,
  'test/delivery/look-alike.property.spec.ts': 21,
  'test/sandbox-page/page.views.spec.ts': 21,
  'test/jobs/jobs.archived-id.spec.ts': 21,
  'test/validation/email-rules.property.spec.ts': 20,
  'test/nest/email-testing.module.spec.ts': 16,
  'test/sandbox-page/page.mailbox-tools.spec.ts': 16,
  'test/outbox/outbox.fetch-index.spec.ts': 15,
  'test/outbox/outbox.long-tx.spec.ts': 15,
  'test/hardening/accounts-leave-memory.spec.ts': 14,
  'test/sandbox-page/page.chromium.spec.ts': 14,
  'test/suite/child-processes.spec.ts': 12,
};

/** The estimate of a file in neither Jest's cache nor SLOW_FILES: most of the suite's files take 1 to 5 s. */
const OTHER_MS = 3_000;

/** Jest's own sequencer (a CommonJS module: its class is the default export, or under `default`). */
const JestSequencer = Sequencer.default ?? Sequencer;

export default class SlowFirstSequencer extends JestSequencer {
  sort(tests) {
    const estimate = (test) => {
      const cached = this.time(test);
      if (cached != null) return cached;
      const known = SLOW_FILES[relative(test.context.config.rootDir, test.path).split('\\').join('/')];
      return known !== undefined ? known * 1_000 : OTHER_MS;
    };
    const keyed = tests.map((test) => ({
      test,
      failed: this.hasFailed(test),
      ms: estimate(test),
      size: test.context.hasteFS.getSize(test.path) ?? 0, // between equal estimates, the larger file first
    }));
    keyed.sort((a, b) => {
      if (a.failed !== b.failed) return a.failed ? -1 : 1;
      return b.ms - a.ms || b.size - a.size;
    });
    return keyed.map(({ test }) => test);
  }
}
