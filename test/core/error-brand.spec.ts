/**
 * `instanceof` on our errors across two copies of the package (its ES module and CommonJS builds
 * loaded in one process). The second copy is stood in for by classes of the same names carrying the
 * same `Symbol.for` mark; the consumer matrix checks it with the two real builds.
 */
import { EmailApiError, EmailError, EmailRateLimitError, EmailValidationError } from '../../lib/index.js';

const BRAND = Symbol.for('nestjs-transactional-email.error');

/** A second copy of part of the error hierarchy, as the other build would define it. */
function otherCopy() {
  class EmailError extends Error {}
  Object.defineProperty(EmailError.prototype, BRAND, { value: true });
  class EmailApiError extends EmailError {}
  class EmailBadRequestError extends EmailApiError {}
  return { EmailError, EmailApiError, EmailBadRequestError };
}

describe('instanceof across copies of the package', () => {
  const other = otherCopy();

  it('holds for the class of the error and every class it extends', () => {
    const err = new other.EmailBadRequestError('bad');
    expect(err instanceof EmailApiError).toBe(true);
    expect(err instanceof EmailError).toBe(true);
  });

  it('does not hold for a class the error does not extend', () => {
    expect(new other.EmailBadRequestError('bad') instanceof EmailRateLimitError).toBe(false);
    expect(new other.EmailApiError('x') instanceof EmailValidationError).toBe(false);
  });

  it('does not hold for look-alikes without the mark, or for other values', () => {
    class EmailApiError extends Error {}
    expect(new EmailApiError('x') instanceof EmailError).toBe(false);
    expect(new Error('x') instanceof EmailError).toBe(false);
    expect((null as unknown) instanceof EmailError).toBe(false);
    expect({ name: 'EmailError' } instanceof EmailError).toBe(false);
  });

  it('keeps plain instanceof within one copy, subclasses included', () => {
    const err = new EmailRateLimitError({ status: 429, method: 'POST', path: '/emails', apiMessage: 'slow' });
    expect(err instanceof EmailRateLimitError).toBe(true);
    expect(err instanceof EmailApiError).toBe(true);
    expect(err instanceof EmailValidationError).toBe(false);
    class AppError extends EmailError {}
    expect(new AppError('x') instanceof AppError).toBe(true);
    expect(new EmailError('x') instanceof AppError).toBe(false);
  });

  it('keeps the mark on the prototype, not on the error itself', () => {
    const err = new EmailError('x');
    expect(Object.getOwnPropertySymbols(err)).toEqual([]);
    expect(Object.keys(err.toJSON())).not.toContain(BRAND.toString());
  });
});
