// PLACEHOLDER: owned by the DTO work (issue 3), which replaces this file with the full rule set.
import type { EmailValidationIssue } from '../errors/email-validation.error.js';

/** Checks one single-send input against every rule of the contract; returns all problems found. */
export function validateEmailInput(input: unknown): EmailValidationIssue[] {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return [{ path: '', message: 'must be an object' }];
  }
  return [];
}

/** Checks a batch (1 to 100 items) against every rule of the contract; paths start with `[index]`. */
export function validateBatchItems(items: unknown): EmailValidationIssue[] {
  if (!Array.isArray(items)) return [{ path: '', message: 'must be an array of 1 to 100 emails' }];
  return [];
}
