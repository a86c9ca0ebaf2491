// The documented install lines are what the consumer test installs (test/consumer/install-lines.ts reads
// them); this spec keeps them well formed and keeps the other guides from growing their own.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { missingPeerMessage } from '../../lib/errors/missing-peer.error.js';
import {
  INSTALL_GUIDE,
  installLines,
  installSpecs,
  ORM_GUIDE,
  type NestMajor,
} from '../consumer/install-lines.js';

const repo = process.cwd();
const pkg = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as {
  peerDependencies: Record<string, string>;
};

/** The optional peers whose major follows NestJS's, and the major each Nest major needs. */
const NEST_MAJOR_PEERS: Record<NestMajor, Record<string, string>> = {
  nest11: {
    '@nestjs/config': '^4',
    '@nestjs/terminus': '^11',
    '@nestjs/bullmq': '^11',
    '@nestjs/swagger': '^11',
  },
  nest12: {
    '@nestjs/config': '^12',
    '@nestjs/terminus': '^12',
    '@nestjs/bullmq': '^12',
    '@nestjs/swagger': '^12',
  },
};

describe('install lines per NestJS major (docs/getting-started.md)', () => {
  it.each(['nest11', 'nest12'] as const)(
    '%s: the package, its validators, and each Nest-bound peer at its major',
    (major) => {
      const specs = installSpecs(major);
      const ranges = Object.fromEntries(specs.map((s) => [s.name, s.range]));
      expect(specs[0]).toEqual({ name: 'nestjs-transactional-email', range: 'latest' });
      expect(ranges).toMatchObject({ 'class-validator': 'latest', 'class-transformer': 'latest' });
      expect(ranges).toMatchObject(NEST_MAJOR_PEERS[major]);
      // every optional peer of package.json that a Nest app installs is on the lines (OpenTelemetry has its guide)
      for (const peer of Object.keys(pkg.peerDependencies).filter(
        (p) => !/^@nestjs\/(common|core)$|reflect-metadata|rxjs|opentelemetry/.test(p),
      ))
        expect({ peer, listed: peer in ranges }).toEqual({ peer, listed: true });
    },
  );

  it.each(['nest11', 'nest12'] as const)(
    '%s: an ORM line for every ORM the outbox documents (docs/outbox.md), beside the queue on a TypeORM-compatible ioredis',
    (major) => {
      const orms = Object.fromEntries(installSpecs(`${major}-orms`).map((s) => [s.name, s.range]));
      const headings = [...readFileSync(ORM_GUIDE, 'utf8').matchAll(/^### (\w+)/gm)].map(([, h]) => h);
      const packageOf: Record<string, string> = {
        TypeORM: 'typeorm',
        MikroORM: '@mikro-orm/postgresql',
        Knex: 'knex',
        Kysely: 'kysely',
        Drizzle: 'drizzle-orm',
        Prisma: '@prisma/client',
      };
      const documented = headings.filter((h) => h in packageOf || h === 'pg');
      expect(documented.length).toBeGreaterThanOrEqual(7);
      for (const orm of documented.filter((h) => h !== 'pg'))
        expect({ orm, installed: packageOf[orm] in orms }).toEqual({ orm, installed: true });
      expect(orms['@nestjs/typeorm']).toBe(major === 'nest11' ? '^11' : '^12');
      // TypeORM 1 declares ioredis ^5 as an optional peer: the queue's line must not install 6
      const base = Object.fromEntries(installSpecs(major).map((s) => [s.name, s.range]));
      expect(base.ioredis).toBe('^5');
    },
  );

  it('refuses a block that is not plain `npm install <packages>` lines', () => {
    const md = '<!-- install-lines: nest11 -->\n\n```bash\nnpm install a@^1 b # note\nnpm i -D c\n```\n';
    expect(installLines(md, 'nest11')).toEqual(['npm install a@^1 b', 'npm i -D c']);
    expect(() => installSpecs('nest11', md)).toThrow(/not a plain "npm install <packages>" line: npm i -D c/);
    expect(installSpecs('nest11', md.replace('npm i -D c\n', ''))).toEqual([
      { name: 'a', range: '^1' },
      { name: 'b', range: 'latest' },
    ]);
    expect(() => installSpecs('nest12', md)).toThrow(/no "<!-- install-lines: nest12 -->"/);
  });

  it('no other guide has an install line for a peer whose major follows NestJS', () => {
    const documented = new Set([
      ...installLines(readFileSync(INSTALL_GUIDE, 'utf8'), 'nest11'),
      ...installLines(readFileSync(INSTALL_GUIDE, 'utf8'), 'nest12'),
    ]);
    const files = [
      'README.md',
      ...readdirSync(join(repo, 'docs'))
        .filter((f) => f.endsWith('.md'))
        .map((f) => `docs/${f}`),
    ];
    const stray: string[] = [];
    for (const file of files) {
      if (join(repo, file) === INSTALL_GUIDE) continue;
      for (const line of readFileSync(join(repo, file), 'utf8').split('\n')) {
        const command = line.replace(/#.*$/, '').trim();
        if (!/^npm (install|i) /.test(command) || documented.has(command)) continue;
        if (/@nestjs\/(config|terminus|bullmq|swagger)|bullmq/.test(command))
          stray.push(`${file}: ${command}`);
      }
    }
    expect(stray).toEqual([]);
  });

  it('the missing-peer error names the same ranges as the install lines, per major', () => {
    const ranges = (major: NestMajor) =>
      Object.fromEntries(installSpecs(major).map((x) => [x.name, x.range]));
    for (const peer of ['@nestjs/config', '@nestjs/terminus']) {
      const message = missingPeerMessage(peer, 'emailConfig');
      expect(message).toContain(`npm install ${peer}@${ranges('nest12')[peer]} in a NestJS 12 app`);
      expect(message).toContain(`npm install ${peer}@${ranges('nest11')[peer]} in a NestJS 11 app`);
    }
    expect(missingPeerMessage('bullmq', 'EmailQueueModule')).toMatch(/: npm install bullmq$/);
  });
});
