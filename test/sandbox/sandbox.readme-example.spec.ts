// The e2e example of docs/sandbox.md ("A complete e2e test"), kept runnable: if this file
// changes, change the guide too. The guide imports by package name; here the sources are imported
// directly so that type-checking does not need a build.
import { Body, Controller, Param, Post, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { EmailModule, EmailService } from '../../lib/index.js';
import { EmailSandbox } from '../../lib/testing/index.js';

@Controller('orders')
class OrdersController {
  constructor(private readonly email: EmailService) {}

  @Post(':id/confirm')
  async confirm(@Param('id') id: string, @Body() body: { email: string }) {
    const log = await this.email.send(
      {
        from: 'Shop <orders@shop.test>',
        to: [body.email],
        subject: `Order ${id} confirmed`,
        html: `<p>Thanks! <a href="https://shop.test/orders/${id}">See your order</a></p>`,
      },
      { idempotencyKey: `order-confirmation:${id}` },
    );
    return { messageId: log.id, status: log.status };
  }
}

describe('order confirmation (e2e)', () => {
  let sandbox: EmailSandbox;
  let app: INestApplication;
  let baseUrl: string;

  const confirm = (id: string) =>
    fetch(`${baseUrl}/orders/${id}/confirm`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'ada@example.org' }),
    });

  beforeAll(async () => {
    // the README's recipe as written (EmailSandbox.start and Test.createTestingModule)
    sandbox = await EmailSandbox.start({ domains: ['shop.test'], tracking: { opens: true, clicks: true } });
    const moduleRef = await Test.createTestingModule({
      imports: [EmailModule.forRoot({ apiKey: sandbox.apiKey, baseUrl: sandbox.baseUrl, logger: false })],
      controllers: [OrdersController],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    baseUrl = await app.getUrl();
  });

  beforeEach(() => sandbox.reset()); // no messages, requests, faults or used keys carry over

  afterAll(async () => {
    await app.close();
    await sandbox.close();
  });

  it('sends one confirmation', async () => {
    const res = await confirm('1001');
    expect(res.status).toBe(201);
    const [message] = sandbox.messages();
    expect(message).toMatchObject({ subject: 'Order 1001 confirmed', toAddresses: ['ada@example.org'] });
    expect(sandbox.requests()[0].headers['idempotency-key']).toBe('order-confirmation:1001');
  });

  it('sends once when the order is confirmed twice', async () => {
    await confirm('1002');
    await confirm('1002');
    expect(sandbox.messages()).toHaveLength(1);
  });

  it('sends once when the answer of the send is lost', async () => {
    // The sandbox creates the message, then cuts the connection: the app cannot know it was sent.
    sandbox.faults.add({ route: 'POST /emails', mode: 'drop-after' });
    const res = await confirm('1003');
    expect(res.status).toBe(201); // EmailService found the message in the log instead of sending again
    expect(sandbox.messages()).toHaveLength(1);
  });

  it('records opens and clicks through the rewritten html', async () => {
    const { messageId } = (await (await confirm('1004')).json()) as { messageId: number };
    const html = sandbox.message(messageId)!.html!;
    const link = /href="([^"]+)"/.exec(html)![1]; // points at the sandbox, which redirects
    const click = await fetch(link, { redirect: 'manual' });
    expect(click.headers.get('location')).toBe('https://shop.test/orders/1004');
    sandbox.simulateOpen(messageId);
    expect(sandbox.message(messageId)).toMatchObject({ openCount: 1, clickCount: 1 });
  });
});
