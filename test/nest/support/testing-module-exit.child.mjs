// Run by email-testing.module.spec.ts in plain Node: boots EmailTestingModule, sends, closes the app
// (or, with "fail", has the app fail to boot after the module started its sandbox), prints one JSON
// line and then does nothing more. The spec checks that the process exits by itself: nothing was left
// open that keeps Node running, so a test runner would exit too.
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';

const [libDir, scenario] = process.argv.slice(2);
const lib = await import(`${libDir}/index.ts`);
const kit = await import(`${libDir}/kit/index.ts`);

if (scenario === 'env') {
  // An app whose email settings come from the environment, run with none set (`nest new`'s e2e spec
  // before the recipe): compiling fails, and nothing of ours may be left open.
  const { ConfigModule } = await import('@nestjs/config');
  delete process.env.EMAIL_API_KEY;
  delete process.env.EMAIL_BASE_URL;
  class AppModule {}
  Module({
    imports: [
      ConfigModule.forRoot({ ignoreEnvFile: true }),
      lib.EmailModule.forRootAsync(lib.emailConfig.asProvider()),
    ],
  })(AppModule);
  const error = await Test.createTestingModule({ imports: [AppModule] })
    .compile()
    .then(
      () => null,
      (err) => err.name,
    );
  console.log(JSON.stringify({ error }));
} else if (scenario === 'fail') {
  class Broken {
    constructor() {
      throw new Error('the app cannot boot');
    }
  }
  Injectable()(Broken);
  class BrokenModule {}
  Module({ providers: [Broken] })(BrokenModule);
  const error = await Test.createTestingModule({ imports: [kit.EmailTestingModule.forRoot(), BrokenModule] })
    .compile()
    .then(
      () => null,
      (err) => err.message,
    );
  console.log(JSON.stringify({ error }));
} else {
  const moduleRef = await Test.createTestingModule({ imports: [kit.EmailTestingModule.forRoot()] }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  const log = await app
    .get(lib.EmailService)
    .send({ from: 'a@example.com', to: ['b@example.com'], subject: 's', text: 't' });
  const sent = app.get(kit.SandboxMailbox).sent().length;
  await app.close();
  console.log(JSON.stringify({ status: log.status, sent }));
}
