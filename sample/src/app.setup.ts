import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppModule, type AppModuleOptions } from './app.module.js';
import { setUpSwagger } from './stack/swagger.setup.js';

/**
 * Creates the sample app (not yet listening) with shutdown hooks on, so SIGINT/SIGTERM close the email
 * module's connections, stop the notification worker and close an embedded sandbox. A boot error
 * (bad EMAIL_* variables, say) rejects instead of exiting the process. `main.ts` and the e2e specs
 * both start the app through this. The OpenAPI page is served at `/docs`.
 */
export async function createSampleApp(
  options: AppModuleOptions & { logger?: false } = {},
): Promise<INestApplication> {
  const app = await NestFactory.create(AppModule.register(options), {
    abortOnError: false,
    ...(options.logger === false ? { logger: false as const } : {}),
  });
  app.enableShutdownHooks();
  setUpSwagger(app);
  return app;
}
