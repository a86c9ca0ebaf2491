import { EmailSandbox, SAMPLE_TEMPLATE } from '../../lib/testing/index.js';
import { RawClient } from './sandbox.client.js';
import { useSandbox } from '../support/sandbox.js';

const base = { from: 'hello@example.com', to: ['ada@example.org'] };

describe('EmailSandbox templates', () => {
  const sandbox = useSandbox({
    templates: {
      7: {
        subject: 'Order {{ order }} for {{name}}',
        html: '<p>Hi {{name}}</p>',
        text: 'Hi {{name}}, order {{order}}',
      },
      8: { subject: 'No placeholders', text: 'Static' },
    },
    reset: true,
  });
  const client = new RawClient(() => sandbox);

  afterAll(async () => {
    await client.close();
  });

  it('renders subject, html and text; the record subject is the rendered one', async () => {
    const res = await client.send({ ...base, templateId: 7, variables: { name: 'Ada <3', order: 'A-1' } });
    expect(res.status).toBe(201);
    expect(res.json.subject).toBe('Order A-1 for Ada <3');
    const detail = await client.call('GET', `/emails/${res.json.id}`);
    expect(detail.json.html).toBe('<p>Hi Ada &lt;3</p>');
    expect(detail.json.bodyText).toBe('Hi Ada <3, order A-1');
  });

  it('answers 400 when a placeholder has no variable', async () => {
    const res = await client.send({ ...base, templateId: 7, variables: { name: 'Ada' } });
    expect(res.status).toBe(400);
    expect(res.json.error).toMatch(/order/);
  });

  it('answers 400 for a variable the template does not use', async () => {
    const res = await client.send({
      ...base,
      templateId: 7,
      variables: { name: 'A', order: '1', extra: 'x' },
    });
    expect(res.status).toBe(400);
    expect(res.json.error).toMatch(/extra/);
  });

  it('answers 400 for a template id that does not exist', async () => {
    const res = await client.send({ ...base, templateId: 99, variables: {} });
    expect(res.status).toBe(400);
    expect(res.json.error).toMatch(/99/);
  });

  it('accepts a template without placeholders with empty or omitted variables', async () => {
    expect((await client.send({ ...base, templateId: 8, variables: {} })).status).toBe(201);
    expect((await client.send({ ...base, templateId: 8 })).status).toBe(201);
    expect((await client.send({ ...base, templateId: 8, variables: { a: 'b' } })).status).toBe(400);
  });

  it('checks template variables of batch items too', async () => {
    const res = await client.call('POST', '/emails/batch', {
      body: [
        { ...base, templateId: 8 },
        { ...base, templateId: 7, variables: { name: 'A' } },
      ],
    });
    expect(res.status).toBe(400);
    expect(res.json.error).toMatch(/^\[1\]\.variables\.order/);
  });
});

describe('EmailSandbox default template', () => {
  it('offers the sample template 1 when no templates are given', async () => {
    // own sandbox: options unlike the shared one (useSandbox starts one per describe)
    const sandbox = await EmailSandbox.start();
    const client = new RawClient(() => sandbox);
    try {
      const res = await client.send({ ...base, templateId: 1, variables: { name: 'Ada' } });
      expect(res.status).toBe(201);
      expect(res.json.subject).toBe(SAMPLE_TEMPLATE.subject.replace('{{name}}', 'Ada'));
    } finally {
      await client.close();
      await sandbox.close();
    }
  });
});
