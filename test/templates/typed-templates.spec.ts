import {
  defineEmailTemplates,
  EmailBadRequestError,
  EmailValidationError,
  type EmailInput,
  type EmailService,
} from '../../lib/index.js';
import { emailApp } from '../support/email-app.js';
import { failure } from '../delivery/delivery.support.js';
import { useSandbox } from '../support/sandbox.js';

const templates = defineEmailTemplates({
  welcome: { id: 12, variables: ['name', 'plan'] },
  ping: { id: 14, variables: [] },
});

describe('typed templates over real HTTP (sandbox)', () => {
  const sandbox = useSandbox({
    templates: {
      12: { subject: 'Welcome, {{name}}', text: 'You are on {{plan}}' },
      14: { subject: 'Ping', text: 'pong' },
    },
    reset: true,
  });
  let email: EmailService;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ email, close } = await emailApp({
      baseUrl: sandbox.baseUrl,
      apiKey: sandbox.apiKey,
      defaultFrom: 'app@example.com',
    }));
  });
  afterAll(async () => {
    await close();
  });
  const posts = () => sandbox.requests().filter((r) => r.method === 'POST').length;

  it('a typed send carries the template id and exactly its variables; the service renders it', async () => {
    const record = await email.send(
      templates.welcome({ to: ['ada@example.com'], variables: { name: 'Ada', plan: 'Pro' } }),
    );
    expect(posts()).toBe(1);
    const stored = sandbox.message(record.id);
    expect(stored?.subject).toBe('Welcome, Ada');
    expect(stored?.bodyText).toBe('You are on Pro');
    await email.send(templates.ping({ to: ['ada@example.com'] }));
    expect(posts()).toBe(2);
  });

  it('a missing variable fails before any request, naming it', () => {
    const vars = { name: 'Ada' } as { name: string; plan: string };
    let err: unknown;
    try {
      templates.welcome({ to: ['ada@example.com'], variables: vars });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(EmailValidationError);
    expect((err as EmailValidationError).issues).toEqual([
      { path: 'variables.plan', message: expect.stringContaining('variables.plan is missing') },
    ]);
    expect(sandbox.requests()).toHaveLength(0);
  });

  it('an unknown variable (from an object TypeScript did not check) fails naming it; so do template-owned fields', () => {
    const vars = { name: 'Ada', plan: 'Pro', colour: 'red' };
    const input = { to: ['ada@example.com'], variables: vars, subject: 'Hi' };
    const err = (() => {
      try {
        templates.welcome(input);
      } catch (e) {
        return e as EmailValidationError;
      }
      throw new Error('expected EmailValidationError');
    })();
    expect(err.issues.map((i) => i.path).sort()).toEqual(['subject', 'variables.colour']);
    expect(err.message).toContain(
      'variables.colour is not a variable of template welcome (12; it has: name, plan)',
    );
    expect(sandbox.requests()).toHaveLength(0);
  });

  it('the same rule as the service: an unchecked unknown variable is refused by the service itself', async () => {
    const raw: EmailInput = {
      to: ['ada@example.com'],
      templateId: 12,
      variables: { name: 'Ada', plan: 'Pro', colour: 'red' },
    };
    expect(await failure(email.send(raw))).toBeInstanceOf(EmailBadRequestError);
    expect(posts()).toBe(1); // the typed builder would have made none
  });

  it('malformed declarations are refused at once', () => {
    expect(() => defineEmailTemplates({ bad: { id: 0, variables: ['a', 'a'] } })).toThrow(
      /bad\.id must be a positive integer.*bad\.variables names a variable twice/,
    );
  });
});
