/** Thrown by the record parsers when a response breaks the contract; turned into EmailUnexpectedResponseError. */
export class RecordShapeError extends Error {
  constructor(
    readonly where: string,
    readonly expected: string,
    readonly got: unknown,
  ) {
    super(`${where} must be ${expected} (got ${kindOf(got, undefined)})`);
  }

  /**
   * The message with a string value quoted, after `redact` removed any secret from it and cut it
   * (redacted first, then cut). The plain `message` never quotes a server-supplied string.
   */
  reason(redact: (text: string, max: number) => string): string {
    return `${this.where} must be ${this.expected} (got ${kindOf(this.got, redact)})`;
  }
}

function kindOf(value: unknown, redact: ((text: string, max: number) => string) | undefined): string {
  if (value === null) return 'null';
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return redact === undefined ? 'a string' : JSON.stringify(redact(value, 30));
  return typeof value;
}
