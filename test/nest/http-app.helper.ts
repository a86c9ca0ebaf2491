import type { INestApplication, LoggerService, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';

export type AdapterName = 'express' | 'fastify';
export const ADAPTERS: AdapterName[] = ['express', 'fastify'];

/** What a request to the app answered. */
export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  body: Record<string, any>;
}

/** A Nest application listening on 127.0.0.1 with a real HTTP adapter. */
export interface HttpApp {
  app: INestApplication;
  url: string;
  request(path: string, init?: RequestInit): Promise<Answer>;
  /** Every answer so far, as text with its headers, for secret checks. */
  seen: string[];
  close(): Promise<void>;
}

export async function startHttpApp(
  module: Type<unknown>,
  adapter: AdapterName,
  logger: LoggerService | false = false,
): Promise<HttpApp> {
  const httpAdapter = adapter === 'fastify' ? new FastifyAdapter() : new ExpressAdapter();
  const app = await NestFactory.create(module, httpAdapter, { logger, abortOnError: false });
  await app.listen(0, '127.0.0.1');
  const url = (await app.getUrl()).replace('[::1]', '127.0.0.1').replace('localhost', '127.0.0.1');
  const seen: string[] = [];
  return {
    app,
    url,
    seen,
    async request(path, init) {
      const res = await fetch(url + path, init);
      const text = await res.text();
      seen.push(`${res.status} ${JSON.stringify([...res.headers])} ${text}`);
      let body: Record<string, any> = {};
      try {
        body = JSON.parse(text) as Record<string, any>;
      } catch {
        // not JSON: leave the body empty, the text is there
      }
      return { status: res.status, headers: res.headers, text, body };
    },
    close: () => app.close(),
  };
}

/** A JSON POST. */
export function postJson(body: unknown): RequestInit {
  return { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
}
