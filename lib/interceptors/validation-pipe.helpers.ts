import type { HttpException } from '@nestjs/common';
import type { ValidationError } from 'class-validator';
import { issuesOf, type EmailRuleName } from '../validation/email-rule.decorator.js';
import { EmailValidationError, type EmailValidationIssue } from '../errors/email-validation.error.js';
import { emailErrorToHttpException } from './email-error.helpers.js';

const RULE_PREFIX = 'email:';

/** `prefix` and `path` joined as our issue paths are: `attachments[0].content`, `to[2]`, `[3].to`. */
function join(prefix: string, path: string): string {
  if (prefix === '') return path;
  if (path === '') return prefix;
  return /^\d+$/.test(path)
    ? `${prefix}[${path}]`
    : path.startsWith('[')
      ? prefix + path
      : `${prefix}.${path}`;
}

function collect(error: ValidationError, prefix: string, issues: EmailValidationIssue[]): void {
  const here = join(prefix, error.property);
  for (const [name, message] of Object.entries(error.constraints ?? {})) {
    if (name.startsWith(RULE_PREFIX)) {
      // Our own rules: run the rule again for its issues with their paths (`to[2]`, not just `to`).
      // ValidationPipe leaves the target out by default; an issue is used only if the message says it.
      const found = issuesOf(name.slice(RULE_PREFIX.length) as EmailRuleName, error.value, {
        property: error.property,
        object: error.target ?? {},
      }).filter((issue) => message.includes(issue.message));
      if (found.length > 0) {
        for (const issue of found) {
          const path = join(prefix, issue.path);
          // Messages open with the path they are about; nested ones get the full path, as the service's do.
          const text =
            issue.path !== '' && issue.message.startsWith(issue.path)
              ? path + issue.message.slice(issue.path.length)
              : issue.message;
          issues.push({ path, message: text });
        }
        continue;
      }
    }
    issues.push({
      path: here,
      message: message.startsWith(`${error.property} `) ? message.slice(error.property.length + 1) : message,
    });
  }
  for (const child of error.children ?? []) collect(child, here, issues);
}

/**
 * The issues class-validator found, with the paths `EmailValidationError` uses (`to[2]`,
 * `attachments[0].content`; the items of a `{ items: BatchEmailItemDto[] }` body as `items[3].to[0]`).
 */
export function validationErrorsToIssues(errors: readonly ValidationError[]): EmailValidationIssue[] {
  const issues: EmailValidationIssue[] = [];
  for (const error of errors) collect(error, '', issues);
  return issues;
}

/**
 * An `exceptionFactory` for Nest's `ValidationPipe` that answers a bad DTO in the very shape
 * `EmailErrorInterceptor` gives an `EmailValidationError`: status 400 with `{ statusCode, message,
 * error, outcome: 'not-sent', issues: [{ path, message }] }`, the same paths, so API clients handle one
 * shape. Use it with `whitelist: true, forbidNonWhitelisted: true` to refuse unknown fields too.
 *
 * @example
 * app.useGlobalPipes(
 *   new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true, exceptionFactory: emailValidationExceptionFactory }),
 * );
 * @publicApi
 */
export function emailValidationExceptionFactory(errors: ValidationError[]): HttpException {
  const issues = validationErrorsToIssues(errors);
  const error = new EmailValidationError(issues.length > 0 ? issues : [{ path: '', message: 'is invalid' }]);
  return emailErrorToHttpException(error) as HttpException;
}
