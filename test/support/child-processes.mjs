// Every process a spec file starts dies with the file, whether the file passed, failed or timed out.
//
// The Jest worker's `child_process` functions that start a process in the background (`spawn`, `execFile`,
// `exec`, `fork`) are wrapped once per worker: each child they return is noted for the spec file that runs.
// When the file ends (its test environment's tear-down, after every afterAll), the children still running
// are killed with SIGKILL, each with its whole tree (its descendants read from /proc, so a `npm` that
// started `node` that started workers, or a server started detached in a group of its own, goes too).
// The same happens when the worker itself is told to stop (SIGINT, SIGTERM) or exits.
import childProcess from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';

/** The children of the spec file that runs now (a worker runs one file at a time). */
let current = new Set();

/** The pids of `pid`'s descendants, deepest last, read from /proc (Linux); none elsewhere. */
export function descendantsOf(pid) {
  let entries;
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const parentOf = new Map();
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    try {
      // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so read after its last ")"
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parentOf.set(Number(name), ppid);
    } catch {
      // gone meanwhile
    }
  }
  const out = [];
  const queue = [pid];
  while (queue.length > 0) {
    const parent = queue.shift();
    for (const [child, ppid] of parentOf) {
      if (ppid === parent && !out.includes(child)) {
        out.push(child);
        queue.push(child);
      }
    }
  }
  return out;
}

const running = (child) => child.pid !== undefined && child.exitCode === null && child.signalCode === null;

/** SIGKILLs each child still running and its descendants; answers the pids it killed. */
export function killChildren(children = current) {
  const killed = [];
  for (const child of children) {
    if (!running(child)) continue;
    const tree = [child.pid, ...descendantsOf(child.pid)];
    for (const pid of tree) {
      try {
        process.kill(pid, 'SIGKILL');
        killed.push(pid);
      } catch {
        // already gone
      }
    }
  }
  children.clear();
  return killed;
}

/** Starts noting the children of a new spec file; answers its set. */
export function beginFile() {
  current = new Set();
  return current;
}

let wrapped = false;

/** Wraps the worker's `child_process` once, and kills what is left when the worker stops. */
export function trackChildProcesses() {
  if (wrapped) return;
  wrapped = true;
  for (const name of ['spawn', 'execFile', 'exec', 'fork']) {
    const original = childProcess[name];
    const tracked = function tracked(...args) {
      const child = original.apply(this, args);
      current.add(child);
      return child;
    };
    // `promisify(execFile)` and `promisify(exec)` use the function's own promise form, whose promise
    // carries the child: kept, and tracked too.
    const promised = original[promisify.custom];
    if (typeof promised === 'function') {
      tracked[promisify.custom] = (...args) => {
        const promise = promised(...args);
        if (promise.child) current.add(promise.child);
        return promise;
      };
    }
    childProcess[name] = tracked;
  }
  process.once('exit', () => killChildren());
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => {
      killChildren();
      process.kill(process.pid, signal); // the default action, now that the handler is gone
    });
  }
}
