export { defineEmailTemplates } from './email-templates.helpers.js';
export type {
  EmailTemplate,
  EmailTemplateDefinition,
  EmailTemplateInput,
  EmailTemplateSendFields,
  EmailTemplateVariables,
  EmailTemplates,
} from './email-template.interface.js';
