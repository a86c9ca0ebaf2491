// The suite's test environment: Node's, plus the rule that a spec file's child processes die with it
// (child-processes.mjs): whatever a file started and left running (a worker process, a server, an `npm`
// and all it started) is killed with its tree when the file ends, passed, failed or timed out.
import { TestEnvironment } from 'jest-environment-node';
import { beginFile, killChildren, trackChildProcesses } from './child-processes.mjs';

trackChildProcesses();

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
