import type { ChildProcess } from 'node:child_process';

/** The pids of `pid`'s descendants, read from /proc (Linux); none elsewhere. */
export function descendantsOf(pid: number): number[];
/** SIGKILLs each child still running and its descendants; answers the pids it killed. */
export function killChildren(children?: Set<ChildProcess>): number[];
/** Starts noting the children of a new spec file; answers its set. */
export function beginFile(): Set<ChildProcess>;
/** Wraps the worker's `child_process` once, and kills what is left when the worker stops. */
export function trackChildProcesses(): void;
