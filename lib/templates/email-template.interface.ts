import type { EmailInput } from '../interfaces/email-input.interface.js';

/** A saved template as declared once: its service id and the names of its `{{variables}}`.
 * @publicApi
 */
export interface EmailTemplateDefinition {
  /** The template's id on the service (a positive integer). */
  readonly id: number;
  /** Every placeholder name the template uses; the service requires exactly these. */
  readonly variables: readonly string[];
}

/** The variables of a template: every declared name, each a string, and no other.
 * @publicApi
 */
export type EmailTemplateVariables<D extends EmailTemplateDefinition> = {
  [K in D['variables'][number]]: string;
};

/** The fields of a template send other than the template itself (no subject, html or text: the template has them).
 * @publicApi
 */
export type EmailTemplateSendFields = Omit<
  EmailInput,
  'templateId' | 'variables' | 'subject' | 'html' | 'text'
>;

/** What a typed template send takes: the usual fields, and `variables` exactly as declared.
 * @publicApi
 */
export type EmailTemplateInput<D extends EmailTemplateDefinition> = EmailTemplateSendFields &
  (D['variables'][number] extends never
    ? { variables?: Record<string, never> | null }
    : { variables: EmailTemplateVariables<D> });

/** Builds the `EmailInput` of one template, checking its variables first.
 * @publicApi
 */
export interface EmailTemplate<D extends EmailTemplateDefinition> {
  (input: EmailTemplateInput<D>): EmailInput & { templateId: number; variables: Record<string, string> };
  /** The template's service id. */
  readonly id: D['id'];
  /** Its declared variable names. */
  readonly variables: D['variables'];
}

/** One typed builder per declared template, under the name it was declared with.
 * @publicApi
 */
export type EmailTemplates<T extends Record<string, EmailTemplateDefinition>> = {
  readonly [Name in keyof T]: EmailTemplate<T[Name]>;
};
