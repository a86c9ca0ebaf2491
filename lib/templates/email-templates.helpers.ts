import { EmailValidationError, type EmailValidationIssue } from '../errors/email-validation.error.js';
import type { EmailInput } from '../interfaces/email-input.interface.js';
import type {
  EmailTemplate,
  EmailTemplateDefinition,
  EmailTemplateInput,
  EmailTemplates,
} from './email-template.interface.js';

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const variablePath = (key: string): string =>
  IDENTIFIER.test(key) ? `variables.${key}` : `variables[${JSON.stringify(key)}]`;
const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Fields a template send must not carry: the template gives them. */
const TEMPLATE_OWNED = ['templateId', 'subject', 'html', 'text'] as const;

function checkDefinition(name: string, def: unknown, issues: EmailValidationIssue[]): void {
  if (!isRecord(def)) return void issues.push({ path: name, message: `${name} must be { id, variables }` });
  if (!(typeof def.id === 'number' && Number.isSafeInteger(def.id) && def.id >= 1)) {
    issues.push({
      path: `${name}.id`,
      message: `${name}.id must be a positive integer (the service's template id)`,
    });
  }
  const vars = def.variables;
  if (!Array.isArray(vars) || !vars.every((v) => typeof v === 'string' && v.length > 0)) {
    issues.push({
      path: `${name}.variables`,
      message: `${name}.variables must be an array of non-empty names`,
    });
  } else if (new Set(vars).size !== vars.length) {
    issues.push({ path: `${name}.variables`, message: `${name}.variables names a variable twice` });
  }
}

/** The issues of a template send: each missing, unknown or non-string variable, each field the template owns. */
function checkSend(name: string, def: EmailTemplateDefinition, input: unknown): EmailValidationIssue[] {
  if (!isRecord(input)) return [{ path: '', message: `template ${name} needs an input object` }];
  const issues: EmailValidationIssue[] = [];
  for (const field of TEMPLATE_OWNED) {
    if (input[field] !== undefined) {
      issues.push({
        path: field,
        message: `${field} must not be given: template ${name} (${def.id}) sets it`,
      });
    }
  }
  const given = input.variables ?? {};
  if (!isRecord(given))
    return [...issues, { path: 'variables', message: 'variables must be an object of strings' }];
  const declared = new Set(def.variables);
  const list = def.variables.length > 0 ? def.variables.join(', ') : 'none';
  for (const key of def.variables) {
    const path = variablePath(key);
    if (!Object.hasOwn(given, key)) {
      issues.push({ path, message: `${path} is missing: template ${name} (${def.id}) uses it` });
    } else if (typeof given[key] !== 'string') {
      issues.push({ path, message: `${path} must be a string` });
    }
  }
  for (const key of Object.keys(given)) {
    if (!declared.has(key)) {
      const path = variablePath(key);
      issues.push({
        path,
        message: `${path} is not a variable of template ${name} (${def.id}; it has: ${list})`,
      });
    }
  }
  return issues;
}

function builder<D extends EmailTemplateDefinition>(name: string, def: D): EmailTemplate<D> {
  const variables = Object.freeze([...def.variables]);
  const build = (input: EmailTemplateInput<D>) => {
    const issues = checkSend(name, def, input);
    if (issues.length > 0) throw new EmailValidationError(issues);
    const { variables: given, ...rest } = input as EmailInput;
    return { ...rest, templateId: def.id, variables: { ...(given ?? {}) } as Record<string, string> };
  };
  return Object.freeze(Object.assign(build, { id: def.id, variables })) as unknown as EmailTemplate<D>;
}

/**
 * Declares saved templates once (service id and variable names) and gives one typed builder per
 * template. A builder returns the `EmailInput` to pass to `EmailService.send` (or, without `scheduledAt`
 * and `attachments`, to `sendBatch`). TypeScript refuses a missing or unknown variable; at run time the
 * same rule throws `EmailValidationError` naming the variable, before any request.
 *
 * @example
 * const templates = defineEmailTemplates({ welcome: { id: 12, variables: ['name', 'plan'] } });
 * await email.send(templates.welcome({ to: ['ada@example.com'], variables: { name: 'Ada', plan: 'Pro' } }));
 * @throws EmailValidationError when a definition is malformed (a bad id, a repeated variable name).
 * @publicApi
 */
export function defineEmailTemplates<const T extends Record<string, EmailTemplateDefinition>>(
  definitions: T,
): EmailTemplates<T> {
  const issues: EmailValidationIssue[] = [];
  if (!isRecord(definitions))
    throw new EmailValidationError([{ path: '', message: 'templates must be an object' }]);
  for (const [name, def] of Object.entries(definitions)) checkDefinition(name, def, issues);
  if (issues.length > 0) throw new EmailValidationError(issues);
  const out: Record<string, unknown> = {};
  for (const [name, def] of Object.entries(definitions)) out[name] = builder(name, def);
  return Object.freeze(out) as EmailTemplates<T>;
}
