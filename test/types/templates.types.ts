// Type-level tests of typed templates, checked by `tsc -p test/types` (part of `npm run lint`).
// Each `@ts-expect-error` must meet an error: if the types stopped refusing the line, tsc fails.
import { defineEmailTemplates, type EmailInput, type EmailService } from '../../lib/index.js';

const templates = defineEmailTemplates({
  welcome: { id: 12, variables: ['name', 'plan'] },
  reset: { id: 13, variables: ['link'] },
  ping: { id: 14, variables: [] },
});

declare const email: EmailService;

export async function typedSends(): Promise<void> {
  // Every declared variable, each a string: fine.
  const input: EmailInput = templates.welcome({
    to: ['ada@example.com'],
    variables: { name: 'Ada', plan: 'Pro' },
  });
  await email.send(input);
  await email.send(
    templates.reset({ to: ['ada@example.com'], variables: { link: 'https://x.test/r' }, trackClicks: false }),
  );
  await email.send(templates.ping({ to: ['ada@example.com'] }));
  await email.sendBatch([templates.reset({ to: ['ada@example.com'], variables: { link: 'l' } })]);

  // A missing variable.
  // @ts-expect-error plan is missing
  templates.welcome({ to: ['ada@example.com'], variables: { name: 'Ada' } });

  // An unknown variable.
  // @ts-expect-error colour is not a variable of welcome
  templates.welcome({ to: ['ada@example.com'], variables: { name: 'Ada', plan: 'Pro', colour: 'red' } });

  // A misspelt one.
  // @ts-expect-error lnk is not link
  templates.reset({ to: ['ada@example.com'], variables: { lnk: 'https://x.test/r' } });

  // A value that is not a string.
  // @ts-expect-error variables are strings
  templates.reset({ to: ['ada@example.com'], variables: { link: 42 } });

  // No variables at all.
  // @ts-expect-error variables are required when the template declares some
  templates.reset({ to: ['ada@example.com'] });

  // The template owns the subject and bodies.
  // @ts-expect-error subject comes from the template
  templates.reset({ to: ['ada@example.com'], variables: { link: 'l' }, subject: 'Hi' });

  // A template that is not declared.
  // @ts-expect-error no such template
  templates.invoice({ to: ['ada@example.com'], variables: {} });

  // A template without variables takes none.
  // @ts-expect-error ping has no variables
  templates.ping({ to: ['ada@example.com'], variables: { name: 'Ada' } });

  // The id and names are kept as declared.
  const id: 12 = templates.welcome.id;
  const names: readonly ['name', 'plan'] = templates.welcome.variables;
  void id;
  void names;
}
