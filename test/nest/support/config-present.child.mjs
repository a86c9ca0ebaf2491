// Run by optional-peers.spec.ts in plain Node (where require(esm) works): emailConfig must then be
// made by @nestjs/config's own registerAs. Prints what happened as one JSON line.
import { ConfigModule, ConfigService } from '@nestjs/config';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';

const { emailConfig } = await import(process.argv[2]);
process.env.EMAIL_API_KEY = 'k_test_1';
process.env.EMAIL_BASE_URL = 'https://mail.example.com';
process.env.EMAIL_TIMEOUT_MS = '4321';

class App {}
Module({ imports: [ConfigModule.forFeature(emailConfig)] })(App);
const app = await NestFactory.createApplicationContext(App, { logger: false });
const out = {
  // asProvider() of the real registerAs imports ConfigModule.forFeature(...) directly, not a promise of it
  realRegisterAs: emailConfig.asProvider().imports[0]?.module === ConfigModule,
  key: emailConfig.KEY,
  timeoutMs: app.get(ConfigService).get('email.timeoutMs'),
};
await app.close();
console.log(JSON.stringify(out));
