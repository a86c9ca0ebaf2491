import { Test, type TestingModule } from '@nestjs/testing';
import { EmailModule, EmailService, type EmailModuleOptions } from '../../lib/index.js';

export const TEST_API_KEY = 'sk_test_SECRET_do_not_leak_1234567890';

/** Builds a testing module with EmailModule.forRoot and returns it with its EmailService. */
export async function emailApp(
  options: Partial<EmailModuleOptions> & { baseUrl: string },
): Promise<{ moduleRef: TestingModule; email: EmailService; close: () => Promise<void> }> {
  const moduleRef = await Test.createTestingModule({
    imports: [EmailModule.forRoot({ apiKey: TEST_API_KEY, logger: false, ...options })],
  }).compile();
  await moduleRef.init();
  const email = moduleRef.get(EmailService);
  return { moduleRef, email, close: () => moduleRef.close() };
}
