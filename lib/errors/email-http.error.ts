import { HttpException } from '@nestjs/common';

/**
 * The HTTP answer for one of this package's errors: a Nest `HttpException` (so exception filters
 * and the standard `{ statusCode, message, error }` body work as usual) that also carries response
 * headers, such as `Retry-After`, which `EmailErrorInterceptor` sets before the answer is sent.
 *
 * @example
 * new EmailHttpException({ statusCode: 429, message: 'Slow down', error: 'Too Many Requests' }, 429, {
 *   headers: { 'Retry-After': '30' },
 * })
 */
export class EmailHttpException extends HttpException {
  /** Headers to add to the answer. @default {} */
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    body: Record<string, unknown>,
    status: number,
    options: { headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(body, status, { cause: options.cause });
    this.headers = Object.freeze({ ...options.headers });
  }
}
