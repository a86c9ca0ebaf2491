import { defineEmailTemplates } from 'nestjs-transactional-email';

/**
 * The saved templates this app uses, declared once: id and variable names. `sampleTemplates.welcome(...)`
 * then refuses a missing or unknown variable at compile time, and at run time before any request.
 * (The embedded sandbox has template 1: `Welcome, {{name}}`.)
 */
export const sampleTemplates = defineEmailTemplates({
  welcome: { id: 1, variables: ['name'] },
});
