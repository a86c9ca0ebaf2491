// Module hooks that let plain Node (no Jest) run the package's TypeScript sources, for specs that
// must see Node's own module loading (require(esm) of optional peers). Register with
// `node --import ./test/nest/support/ts-esm.register.mjs`. Transpiled files are cached by content
// in the system temp folder, so that only the first run pays for TypeScript.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CACHE = join(tmpdir(), 'nestjs-transactional-email-ts-cache');
let typescript;

async function transpile(source, fileName) {
  const hash = createHash('sha256').update('v1\0').update(source).digest('hex');
  const cached = join(CACHE, `${hash}.js`);
  try {
    return await readFile(cached, 'utf8');
  } catch {
    // not cached yet
  }
  typescript ??= (await import('typescript')).default;
  const ts = typescript;
  const { outputText } = ts.transpileModule(source, {
    fileName,
    compilerOptions: {
      module: ts.ModuleKind.ESNext,
      target: ts.ScriptTarget.ES2022,
      experimentalDecorators: true,
      emitDecoratorMetadata: true,
      sourceMap: false,
    },
  });
  await mkdir(CACHE, { recursive: true });
  // write then rename: a process reading the cache at the same time never sees half a file
  const partial = `${cached}.${process.pid}.${Date.now()}`;
  await writeFile(partial, outputText);
  await rename(partial, cached);
  return outputText;
}

export async function resolve(specifier, context, next) {
  if (specifier.startsWith('.') && specifier.endsWith('.js') && context.parentURL?.endsWith('.ts')) {
    const candidate = new URL(specifier.slice(0, -3) + '.ts', context.parentURL);
    if (existsSync(fileURLToPath(candidate))) return { url: candidate.href, shortCircuit: true };
  }
  return next(specifier, context);
}

export async function load(url, context, next) {
  if (!url.endsWith('.ts')) {
    const loaded = await next(url, context);
    // CommonJS without its source goes to Node's own require(), as in a user's app: with the source,
    // every require() inside Nest and its packages would come back through these hooks (twice as slow)
    return loaded.format === 'commonjs' ? { ...loaded, source: null } : loaded;
  }
  const file = fileURLToPath(url);
  const source = await transpile(await readFile(file, 'utf8'), file);
  return { format: 'module', source, shortCircuit: true };
}
