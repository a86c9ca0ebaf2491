import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUILD_HASH_FILE, sourceHash } from '../../scripts/source-hash.mjs';
import { SAMPLE_HASH_FILE, sampleBuildPlan, sampleHash } from '../../scripts/sample-build.mjs';

// `npm run sample` starts without rebuilding what has not changed (scripts/sample-build.mjs): its plan, on
// a tree of its own (a real build of the repository would take a minute, and rebuild dist/ under the other
// specs' feet). What a build and a compile leave behind is written by hand: the recorded hashes and outputs.
describe("npm run sample's build step", () => {
  let dir: string;
  const write = (path: string, text: string) => {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  };
  /** What scripts/build.mjs leaves: dist/ and the hash of the sources it built. */
  const built = () => {
    write('dist/index.js', 'export {};');
    write(BUILD_HASH_FILE, `${sourceHash(dir)}\n`);
  };
  /** What the sample's compile leaves: sample/dist/ and the hash of what it read. */
  const compiled = () => {
    write('sample/dist/main.js', '');
    write(SAMPLE_HASH_FILE, `${sampleHash(dir, sourceHash(dir))}\n`);
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'sample-build-'));
    write('package.json', '{"name":"x"}');
    write('lib/index.ts', 'export const a = 1;');
    write('sample/tsconfig.json', '{}');
    write('sample/src/main.ts', 'console.log(1);');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('builds both on a fresh clone, and neither on the next start', () => {
    expect(sampleBuildPlan(dir)).toEqual({ buildPackage: true, compileSample: true });
    built();
    compiled();
    expect(sampleBuildPlan(dir)).toEqual({ buildPackage: false, compileSample: false });
  });

  it('compiles only the sample when only the sample changed', () => {
    built();
    compiled();
    write('sample/src/main.ts', 'console.log(2);');
    expect(sampleBuildPlan(dir)).toEqual({ buildPackage: false, compileSample: true });
    compiled();
    write('sample/src/orders/new.ts', 'export {};'); // a new file counts too
    expect(sampleBuildPlan(dir)).toEqual({ buildPackage: false, compileSample: true });
    compiled();
    write('sample/tsconfig.json', '{"compilerOptions":{}}');
    expect(sampleBuildPlan(dir)).toEqual({ buildPackage: false, compileSample: true });
  });

  it('builds both when the package changed (the sample is typed against it)', () => {
    built();
    compiled();
    write('lib/index.ts', 'export const a = 2;');
    expect(sampleBuildPlan(dir)).toEqual({ buildPackage: true, compileSample: true });
    built();
    expect(sampleBuildPlan(dir)).toEqual({ buildPackage: false, compileSample: true });
  });

  it('builds again what was removed, or left half done', () => {
    built();
    compiled();
    rmSync(join(dir, 'dist'), { recursive: true });
    expect(sampleBuildPlan(dir).buildPackage).toBe(true);
    built();
    rmSync(join(dir, SAMPLE_HASH_FILE)); // a compile that stopped before its hash was recorded
    expect(sampleBuildPlan(dir)).toEqual({ buildPackage: false, compileSample: true });
  });
});
