import type { ExecutionContext, LoggerService } from '@nestjs/common';
import type { EmailError } from '../errors/email.error.js';

/**
 * Options of `EmailErrorInterceptor`: give them to its constructor, or provide them under
 * `EMAIL_ERROR_INTERCEPTOR_OPTIONS` when Nest constructs the interceptor
 * (`@UseInterceptors(EmailErrorInterceptor)`, `APP_INTERCEPTOR`).
 *
 * @example
 * new EmailErrorInterceptor({
 *   map: (err) => (err instanceof EmailNotFoundError ? new GoneException('No such email') : undefined),
 * })
 * @publicApi
 */
export interface EmailErrorInterceptorOptions {
  /**
   * Your own mapping, asked first for each error of this package. Return the exception to throw
   * instead (an `EmailHttpException` also sets its headers), the error itself to let it through
   * untouched, or `undefined` to use the default table (`emailErrorToHttpException`).
   * @default undefined (the default table only)
   */
  map?: (error: EmailError, context: ExecutionContext) => Error | undefined;
  /**
   * Where a warning goes when an error is answered with a 5xx status (the answer hides the details,
   * the log keeps them; neither shows the API key). `false` for none.
   * @default Nest's `Logger` with context `EmailErrorInterceptor`
   */
  logger?: LoggerService | false;
}

/**
 * Token under which `EmailErrorInterceptor` looks for its options when Nest constructs it.
 *
 * @example
 * providers: [
 *   { provide: APP_INTERCEPTOR, useClass: EmailErrorInterceptor },
 *   { provide: EMAIL_ERROR_INTERCEPTOR_OPTIONS, useValue: { map: myMapping } },
 * ]
 * @publicApi
 */
export const EMAIL_ERROR_INTERCEPTOR_OPTIONS = 'nestjs-transactional-email:error-interceptor-options';
