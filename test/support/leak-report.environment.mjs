// A Jest test environment that names what a spec file leaves running (EMAIL_LEAK_REPORT=<dir>): the
// equivalent of --detectOpenHandles that works in Jest's workers, where a leak shows only as "A worker
// process has failed to exit gracefully". It records, with async_hooks, every timer, socket, server and child
// process created while the file runs; at tear-down (after every afterAll) it waits briefly and writes those
// still alive and keeping the process up to <dir>/<file>.txt, each with the stack that made it.
import { createHook } from 'node:async_hooks';
import { mkdirSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import EmailTestEnvironment from './jest.environment.mjs';

const WATCHED = new Set([
  'Timeout',
  'TCPWRAP',
  'TCPSERVERWRAP',
  'PROCESSWRAP',
  'PIPEWRAP',
  'UDPWRAP',
  'FSEVENTWRAP',
]);

export default class LeakReportEnvironment extends EmailTestEnvironment {
  constructor(config, context) {
    super(config, context);
    this.file = context.testPath;
    this.dir = process.env.EMAIL_LEAK_REPORT;
    this.live = new Map();
    if (!this.dir) return;
    const live = this.live;
    this.hook = createHook({
      init(id, type, _trigger, resource) {
        if (WATCHED.has(type)) live.set(id, { type, resource, stack: new Error().stack });
      },
      destroy(id) {
        live.delete(id);
      },
    });
    this.hook.enable();
  }

  async teardown() {
    if (this.dir) {
      await sleep(300).catch(() => undefined);
      this.hook.disable();
      const alive = [...this.live.values()].filter(({ resource }) => {
        const r = resource;
        if (r && typeof r.hasRef === 'function' && !r.hasRef()) return false;
        if (r && r._destroyed) return false;
        return true;
      });
      const lines = alive.map(({ type, stack }) => {
        const frames = stack
          .split('\n')
          .slice(1)
          .filter((l) => !/node:internal|async_hooks|leak-report/.test(l))
          .slice(0, 8);
        return `${type}\n${frames.join('\n')}`;
      });
      if (lines.length > 0) {
        mkdirSync(this.dir, { recursive: true });
        writeFileSync(join(this.dir, `${basename(this.file)}.txt`), lines.join('\n\n'));
      }
    }
    await super.teardown();
  }
}
