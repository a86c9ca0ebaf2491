import type { LoggerService, LogLevel } from '@nestjs/common';
import { inspect } from 'node:util';

/**
 * Collects what is written through a logger (the `logger` option, or Nest's own), one entry per call:
 * `messages` holds the message alone, `lines` the message with every other argument (context, objects),
 * `entries` the message with the level it was written at.
 */
export class CapturingLogger implements LoggerService {
  messages: string[] = [];
  lines: string[] = [];
  entries: { level: LogLevel; message: string }[] = [];
  private at =
    (level: LogLevel) =>
    (...args: unknown[]): void => {
      this.messages.push(String(args[0]));
      this.lines.push(args.map((a) => (typeof a === 'string' ? a : inspect(a, { depth: 5 }))).join(' '));
      this.entries.push({ level, message: String(args[0]) });
    };
  log = this.at('log');
  error = this.at('error');
  warn = this.at('warn');
  debug = this.at('debug');
  verbose = this.at('verbose');
  fatal = this.at('fatal');
}
