// What a hand-rolled Nest client does: HttpService of @nestjs/axios over a keep-alive http.Agent.
import { HttpModule, HttpService } from '@nestjs/axios';
import { NestFactory } from '@nestjs/core';
import { Agent } from 'node:http';
import { firstValueFrom } from 'rxjs';
import { API_KEY, CONNECTIONS, EMAIL, idempotencyKey } from './payload.js';

/** axios through `HttpService`, sharing one keep-alive agent capped at the same connection count. */
export async function createClient(baseUrl) {
  const httpAgent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const app = await NestFactory.createApplicationContext(
    HttpModule.register({ baseURL: baseUrl, httpAgent, headers: { authorization: `Bearer ${API_KEY}` } }),
    { logger: false },
  );
  const http = app.get(HttpService);
  return {
    send: async () => {
      const res = await firstValueFrom(
        http.post('/emails', EMAIL, { headers: { 'idempotency-key': idempotencyKey() } }),
      );
      return res.data;
    },
    list: async () => (await firstValueFrom(http.get('/emails', { params: { limit: 10 } }))).data,
    close: async () => {
      await app.close();
      httpAgent.destroy();
    },
  };
}
