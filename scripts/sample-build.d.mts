/** Where the hash of the sample's last compile is kept (relative to the repository). */
export const SAMPLE_HASH_FILE: string;
/** The hash of what the sample's compile reads under `base`: its sources, its tsconfig, the package's build hash. */
export function sampleHash(base: string, packageHash: string | null): string;
/** What a start of the sample must build under `base`. */
export function sampleBuildPlan(base: string): { buildPackage: boolean; compileSample: boolean };
