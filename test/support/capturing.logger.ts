import type { LoggerService } from '@nestjs/common';
import { inspect } from 'node:util';

/**
 * Collects what is written through a logger (the `logger` option, or Nest's own), one entry per call:
 * `messages` holds the message alone, `lines` the message with every other argument (context, objects).
 */
export class CapturingLogger implements LoggerService {
  messages: string[] = [];
  lines: string[] = [];
  private add = (...args: unknown[]): void => {
    this.messages.push(String(args[0]));
    this.lines.push(args.map((a) => (typeof a === 'string' ? a : inspect(a, { depth: 5 }))).join(' '));
  };
  log = this.add;
  error = this.add;
  warn = this.add;
  debug = this.add;
  verbose = this.add;
  fatal = this.add;
}
