/** Thrown by the record parsers when a response breaks the contract; turned into EmailUnexpectedResponseError. */
export class RecordShapeError extends Error {
  constructor(
    readonly where: string,
    readonly expected: string,
    readonly got: unknown,
  ) {
    super(`${where} must be ${expected} (got ${kindOf(got)})`);
  }
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return JSON.stringify(value.length > 30 ? value.slice(0, 30) + '…' : value);
  return typeof value;
}
