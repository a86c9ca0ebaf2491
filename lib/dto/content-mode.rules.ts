import type { EmailValidationIssue } from '../errors/email-validation.error.js';
import { messages } from './email-rules.messages.js';

const given = (v: unknown): boolean => v !== undefined && v !== null;
const nonEmpty = (v: unknown): boolean => typeof v === 'string' && v.length > 0;

/**
 * The contract's content rules, read from the whole email:
 * - inline (no `templateId`): `subject` plus a non-empty `html` and/or `text`; no `variables`;
 * - template (`templateId` set): `variables` required (may be `{}`); `subject`, `html`, `text` absent
 *   (`null` counts as absent for the nullable `html` and `text`, not for `subject`, which is never nullable).
 * Issues land on the field to change (`subject`, `html`, `variables`), after `prefix`.
 */
export function checkContentMode(
  email: Record<string, unknown>,
  prefix: string,
  issues: EmailValidationIssue[],
): void {
  if (given(email.templateId)) {
    if (email.subject !== undefined) push(issues, prefix + 'subject', messages.notWithTemplate);
    if (given(email.html)) push(issues, prefix + 'html', messages.notWithTemplate);
    if (given(email.text)) push(issues, prefix + 'text', messages.notWithTemplate);
    if (!given(email.variables)) push(issues, prefix + 'variables', messages.variablesRequired);
    return;
  }
  if (!given(email.subject)) push(issues, prefix + 'subject', messages.subjectMissing);
  if (!nonEmpty(email.html) && !nonEmpty(email.text)) push(issues, prefix + 'html', messages.bodyMissing);
  if (given(email.variables)) push(issues, prefix + 'variables', messages.variablesWithoutTemplate);
}

function push(issues: EmailValidationIssue[], path: string, message: (p: string) => string): void {
  issues.push({ path, message: message(path) });
}
