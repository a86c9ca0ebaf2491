// The suite's test environment: Node's, plus the rule that a spec file's child processes die with it
// (child-processes.mjs): whatever a file started and left running (a worker process, a server, an `npm`
// and all it started) is killed with its tree when the file ends, passed, failed or timed out.
import { TestEnvironment } from 'jest-environment-node';
import { beginFile, killChildren, trackChildProcesses } from './child-processes.mjs';

trackChildProcesses();

// By the end of a run a worker's heap holds about 1 GB (every file's modules); freeing it at a natural exit
// takes longer than the 500 ms jest-worker allows before it kills the worker and prints "A worker process has
// failed to exit gracefully", most of all when all five exit at once on two cores. Once the worker's loop has
// nothing left to do (Jest's end message removed its last listener), it exits at once: the 'exit' listeners
// still run, only the heap's teardown is skipped.
process.once('beforeExit', (code) => process.exit(code));

export default class EmailTestEnvironment extends TestEnvironment {
  async setup() {
    this.children = beginFile();
    await super.setup();
  }

  async teardown() {
    const killed = killChildren(this.children);
    if (killed.length > 0 && process.env.EMAIL_CHILDREN_REPORT)
      process.stderr.write(`killed ${killed.length} process(es) left running: ${killed.join(' ')}\n`);
    await super.teardown();
  }
}
