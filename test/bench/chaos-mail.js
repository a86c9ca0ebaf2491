// The look-alike mail and the sandbox faults of the queue's and the outbox's chaos runs: ten subjects
// (nine inline and the template's) to five recipients from one sender, every 7th job a template, every
// 50th job a repeat of the job before it, so that `lost` and `wrong_record` are counted by body.

export const SUBJECTS = [
  'Your login code',
  'Your order has shipped',
  'Your receipt',
  'Reset your password',
  'Welcome aboard',
  'Your invoice',
  'Action required',
  'Your weekly summary',
  'Security alert',
]; // and the template's subject: ten in all
export const TEMPLATE_ID = 1;

/** The faults the sandbox draws at random (20% of requests in the runs). */
export const FAULT_MODES = [
  'delay',
  'drop-before',
  'drop-after',
  'fail-after',
  { mode: 'status', status: 429, retryAfter: 1 },
  { mode: 'status', status: 500 },
  { mode: 'status', status: 502 },
  { mode: 'status', status: 503 },
];

/** Job i's input in run `run`; every 50th job repeats the input of the job before it (two jobs, two emails). */
export function inputOf(run, i) {
  const n = i % 50 === 1 ? i - 1 : i;
  const to = [`user${n % 5}@example.com`];
  if (n % 7 === 3)
    return {
      from: 'shop@example.com',
      to,
      templateId: TEMPLATE_ID,
      variables: { name: 'Ada', code: `${run}-${n}` },
    };
  return { from: 'shop@example.com', to, subject: SUBJECTS[n % SUBJECTS.length], text: `Body ${run}-${n}` };
}

/** The text body the sandbox holds for job i's input. */
export function bodyOf(run, i) {
  const input = inputOf(run, i);
  return input.templateId ? `Sign in, Ada: ${input.variables.code}` : input.text;
}
