import { registerDecorator, type ValidationArguments, type ValidationOptions } from 'class-validator';
import type { EmailValidationIssue } from '../errors/email-validation.error.js';
import { checkAttachmentList, checkContent, checkFilename, checkMimeType } from './attachment.rules.js';
import { checkFrom, checkTo } from './address.rules.js';
import {
  checkBody,
  checkContentMode,
  checkExtraField,
  checkSubject,
  checkTemplateId,
  checkTracking,
  checkVariables,
} from './content.rules.js';
import { checkScheduledAt } from './schedule.rules.js';

type Issues = EmailValidationIssue[];
type Rule = (value: unknown, property: string, issues: Issues) => void;

/** The rules a DTO property can be held to; each runs the same check as the service's own validation. */
const RULES = {
  from: (v, _p, i) => checkFrom(v, '', i),
  to: (v, _p, i) => checkTo(v, '', i),
  subject: (v, _p, i) => checkSubject(v, '', i),
  html: (v, _p, i) => checkBody(v, '', 'html', i),
  text: (v, _p, i) => checkBody(v, '', 'text', i),
  templateId: (v, _p, i) => checkTemplateId(v, '', i),
  variables: (v, _p, i) => checkVariables(v, '', i),
  tracking: (v, p, i) => checkTracking(v, '', p, i),
  scheduledAt: (v, _p, i) => checkScheduledAt(v, '', Date.now(), i),
  attachments: (v, _p, i) => checkAttachmentList(v, '', false, i),
  filename: (v, p, i) => checkFilename(v, p, i),
  content: (v, p, i) => void checkContent(v, p, i),
  contentType: (v, p, i) => checkMimeType(v, p, i),
  unsupported: (v, p, i) => checkExtraField(p, v, p, 'email', i),
  unsupportedInAttachment: (v, p, i) => checkExtraField(p, v, p, 'attachment', i),
  notInBatch: (v, p, i) => checkExtraField(p, v, p, 'batch item', i),
} satisfies Record<string, Rule>;

/**
 * Name of a rule usable with {@link EmailRule}.
 */
export type EmailRuleName = keyof typeof RULES;

/** Properties whose issues also come from the content rules (inline vs template mode). */
const CONTENT_MODE_FIELDS = new Set(['subject', 'html', 'text', 'variables']);

/**
 * The issues one rule finds in a property's value, with paths relative to the object holding it
 * (`to[2]`, `content`); `emailValidationExceptionFactory` uses it to answer with the same paths.
 * @internal
 */
export function issuesOf(
  rule: EmailRuleName,
  value: unknown,
  args: Pick<ValidationArguments, 'property' | 'object'>,
): Issues {
  const issues: Issues = [];
  RULES[rule](value, args.property, issues);
  if (CONTENT_MODE_FIELDS.has(rule)) {
    const mode: Issues = [];
    checkContentMode(args.object as Record<string, unknown>, '', mode);
    for (const issue of mode) if (issue.path === args.property) issues.push(issue);
  }
  return issues;
}

/**
 * Holds a DTO property to one of the contract's rules. The check is the very function the service runs
 * before sending, so a DTO and `EmailService` never disagree. All problems of the property are reported,
 * joined with `; `, under the constraint name `email:<rule>`.
 *
 * @example
 * class ContactDto { @EmailRule('from') sender!: string; }
 */
export function EmailRule(rule: EmailRuleName, options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) => {
    registerDecorator({
      name: `email:${rule}`,
      target: target.constructor,
      propertyName: String(propertyName),
      constraints: [rule],
      options,
      validator: {
        validate: (value: unknown, args: ValidationArguments) => issuesOf(rule, value, args).length === 0,
        defaultMessage: (args: ValidationArguments) =>
          issuesOf(rule, args.value, args)
            .map((issue) => issue.message)
            .join('; '),
      },
    });
  };
}
