import type { SandboxTemplate } from './sandbox.options.js';
import { SandboxHttpError } from './sandbox.http.js';

/** A template split once into text and placeholder parts. */
interface CompiledTemplate {
  subject: string[];
  html: string[] | null;
  text: string[] | null;
  /** Every placeholder name used in subject, html or text. */
  names: ReadonlySet<string>;
}

/** The bodies of a template-mode send after filling in its variables. */
export interface RenderedTemplate {
  subject: string;
  html: string | null;
  text: string | null;
}

const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}/;
const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Escapes a variable value for use inside html. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]);
}

/** Splits `a {{x}} b` into ['a ', 'x', ' b']: odd indexes are placeholder names. */
function split(source: string, names: Set<string>): string[] {
  const parts = source.split(new RegExp(PLACEHOLDER.source, 'g'));
  for (let i = 1; i < parts.length; i += 2) names.add(parts[i]);
  return parts;
}

function fill(parts: string[], vars: Record<string, string>, escape: boolean): string {
  let out = parts[0];
  for (let i = 1; i < parts.length; i += 2)
    out += (escape ? escapeHtml(vars[parts[i]]) : vars[parts[i]]) + parts[i + 1];
  return out;
}

/**
 * Saved templates by id. Rendering is strict: the variables must name exactly the template's
 * placeholders, no more and no fewer. Values are html-escaped in the html body only.
 *
 * @example
 * new SandboxTemplates({ 7: { subject: 'Hi {{name}}', text: 'Code: {{code}}' } })
 *   .render(7, { name: 'Ada', code: '123' }); // { subject: 'Hi Ada', html: null, text: 'Code: 123' }
 */
export class SandboxTemplates {
  private readonly compiled = new Map<number, CompiledTemplate>();

  constructor(templates: Record<number, SandboxTemplate>) {
    for (const [id, t] of Object.entries(templates)) {
      const names = new Set<string>();
      this.compiled.set(Number(id), {
        subject: split(t.subject, names),
        html: t.html ? split(t.html, names) : null,
        text: t.text ? split(t.text, names) : null,
        names,
      });
    }
  }

  /** Renders a template; 400 for an unknown id, a missing variable or an unknown variable. */
  render(id: number, variables: Record<string, string> | null, at = ''): RenderedTemplate {
    const t = this.compiled.get(id);
    if (!t) throw new SandboxHttpError(400, `${at}templateId ${id} does not exist`);
    const vars = variables ?? {};
    for (const name of t.names) {
      if (!Object.hasOwn(vars, name)) throw new SandboxHttpError(400, `${at}variables.${name} is missing`);
    }
    for (const name in vars) {
      if (!t.names.has(name)) {
        throw new SandboxHttpError(400, `${at}variables.${name} is not used by the template`);
      }
    }
    return {
      subject: fill(t.subject, vars, false),
      html: t.html && fill(t.html, vars, true),
      text: t.text && fill(t.text, vars, false),
    };
  }
}
