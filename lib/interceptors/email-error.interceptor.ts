import {
  HttpException,
  Inject,
  Injectable,
  Logger,
  Optional,
  type CallHandler,
  type ExecutionContext,
  type LoggerService,
  type NestInterceptor,
} from '@nestjs/common';
import { catchError, throwError, type Observable } from 'rxjs';
import { EmailApiError } from '../errors/email-api.error.js';
import { EmailError } from '../errors/email.error.js';
import { emailErrorToHttpException } from './email-error.helpers.js';
import { EMAIL_ERROR_INTERCEPTOR_OPTIONS, type EmailErrorInterceptorOptions } from './email-error.options.js';
import { EmailHttpException } from '../errors/email-http.error.js';

type HeaderTarget = {
  header?: (name: string, value: string) => unknown;
  setHeader?: (name: string, value: string) => unknown;
  headersSent?: boolean;
  sent?: boolean;
};

/** Sets a header on an Express response or a Fastify reply, unless the answer has already gone out. */
function setHeader(response: unknown, name: string, value: string): void {
  const res = response as HeaderTarget | undefined;
  if (!res || res.headersSent === true || res.sent === true) return;
  if (typeof res.header === 'function') res.header(name, value);
  else if (typeof res.setHeader === 'function') res.setHeader(name, value);
}

/**
 * Turns this package's errors into Nest HTTP exceptions with the default table (see
 * `emailErrorToHttpException`), or with your `map`. Errors that are not ours pass through untouched.
 * Works per controller, per route or globally, on Express and on Fastify.
 *
 * @example
 * @UseInterceptors(EmailErrorInterceptor)            // per controller or per route
 * providers: [{ provide: APP_INTERCEPTOR, useClass: EmailErrorInterceptor }]   // globally
 * app.useGlobalInterceptors(new EmailErrorInterceptor({ map: myMapping }))
 * @publicApi
 */
@Injectable()
export class EmailErrorInterceptor implements NestInterceptor {
  private readonly map: EmailErrorInterceptorOptions['map'];
  private readonly logger: LoggerService | false;

  constructor(
    @Optional() @Inject(EMAIL_ERROR_INTERCEPTOR_OPTIONS) options: EmailErrorInterceptorOptions = {},
  ) {
    this.map = options?.map;
    this.logger = options?.logger ?? new Logger(EmailErrorInterceptor.name);
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(catchError((err: unknown) => throwError(() => this.translate(err, context))));
  }

  /** The exception to throw instead of `error` (or `error` itself when it passes through). */
  translate(error: unknown, context: ExecutionContext): unknown {
    if (!(error instanceof EmailError)) return error;
    const exception = this.map?.(error, context) ?? emailErrorToHttpException(error) ?? error;
    if (exception instanceof EmailHttpException && context.getType() === 'http') {
      const response = context.switchToHttp().getResponse<unknown>();
      for (const [name, value] of Object.entries(exception.headers)) setHeader(response, name, value);
    }
    // A refusal (4xx) of the service is already logged once, with its reason, by the module's delivery
    // observer: a 401 or 403 answered 502 here is not logged a second time.
    const refused = error instanceof EmailApiError && error.status >= 400 && error.status < 500;
    if (exception instanceof HttpException && exception.getStatus() >= 500 && !refused && this.logger) {
      this.logger.warn(`${error.name} answered ${exception.getStatus()}: ${error.message}`);
    }
    return exception;
  }
}
