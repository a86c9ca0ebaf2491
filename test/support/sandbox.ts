import {
  EmailSandbox,
  type SandboxMailbox,
  type SandboxMailboxOptions,
  type SandboxOptions,
} from '../../lib/testing/index.js';

/**
 * A stand-in for a value that a hook sets later: every property read goes to the current value (methods
 * bound to it), so a spec keeps writing `sandbox.messages()` with `const sandbox = useSandbox()`.
 */
function lateBound<T extends object>(what: string, current: () => T | undefined): T {
  return new Proxy({} as T, {
    get(_, property) {
      const target = current();
      if (target === undefined)
        throw new Error(`${what} is set in beforeAll/beforeEach: read it inside a test or a hook`);
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
    has: (_, property) => property in (current() ?? {}),
    getPrototypeOf: () => Object.getPrototypeOf(current() ?? {}) as object | null,
  });
}

/** `useSandbox` options: the sandbox's own, plus what happens between tests. */
export type UseSandboxOptions = SandboxOptions & {
  /** Empties the sandbox before each test (`sandbox.reset()`: messages, requests, faults, keys used). */
  reset?: boolean;
};

/**
 * One EmailSandbox for the file (or the `describe` block that calls it): started in beforeAll, closed
 * in afterAll (after `closeFirst`, e.g. an app that sends to it), reset before each test with
 * `reset: true`. Returns it at once, as a stand-in that reaches the started sandbox inside tests and
 * hooks. A spec starts its own sandbox only for what this cannot do (one for a single test, one that is
 * stopped and started again), and says why in a comment.
 */
export function useSandbox(options: UseSandboxOptions = {}, closeFirst?: () => Promise<void>): EmailSandbox {
  const { reset = false, ...sandboxOptions } = options;
  let sandbox: EmailSandbox | undefined;
  beforeAll(async () => {
    sandbox = await EmailSandbox.start(sandboxOptions);
  });
  afterAll(async () => {
    try {
      await closeFirst?.();
    } finally {
      await sandbox?.close();
      sandbox = undefined;
    }
  });
  if (reset) beforeEach(() => sandbox!.reset());
  return lateBound('useSandbox()', () => sandbox);
}

/**
 * A fresh mailbox of `sandbox` for each test (same server, its own key, messages and clock), closed
 * after it: tests that share a sandbox cannot see each other's mail.
 */
export function useMailbox(sandbox: EmailSandbox, options: SandboxMailboxOptions = {}): SandboxMailbox {
  let mailbox: SandboxMailbox | undefined;
  beforeEach(() => {
    mailbox = sandbox.mailbox(options);
  });
  afterEach(async () => {
    await mailbox?.close();
    mailbox = undefined;
  });
  return lateBound('useMailbox()', () => mailbox);
}
