export { EmailErrorInterceptor } from './email-error.interceptor.js';
export { emailErrorToHttpException, retryAfterSeconds } from './email-error.mapping.js';
export { EMAIL_HTTP_MESSAGES } from './email-error.messages.js';
export { EMAIL_ERROR_INTERCEPTOR_OPTIONS, type EmailErrorInterceptorOptions } from './email-error.options.js';
export { EmailHttpException } from './email-http.exception.js';
export { emailValidationExceptionFactory } from './validation-pipe.mapping.js';
