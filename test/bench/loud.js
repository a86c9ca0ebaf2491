// What every benchmark script shares so that it fails loudly: a figure it could not measure, a wait that
// never ends or an error ends the script with a non-zero exit and the reason printed, never a silent
// `null` or a hang. `npm run bench` (run.js) then names the missing figure and why.

/** Whether `value` is a figure: a finite number. */
export const isFigure = (value) => typeof value === 'number' && Number.isFinite(value);

/**
 * Throws one error naming every figure of `result` (by the names given) that is not a finite number.
 * A benchmark calls it before it prints its JSON line.
 */
export function requireFigures(result, names, what = 'the benchmark') {
  const missing = names.filter((name) => !isFigure(result[name]));
  if (missing.length > 0) {
    const got = missing.map((name) => `${name}=${JSON.stringify(result[name] ?? null)}`).join(', ');
    throw new Error(`${what} could not measure ${got}`);
  }
  return result;
}

/** `promise`, or an error naming `what` once `ms` have passed: a benchmark never waits forever. */
export function within(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Makes any error that escapes (an unhandled rejection, a throw in a callback) end the process with
 * exit code 1 and the error printed, instead of a hang or a half-printed result.
 */
export function failLoudly(name, limitMs = 600_000) {
  const die = (err) => {
    console.error(`${name}: cannot measure: ${err?.stack ?? err}`);
    process.exit(1);
  };
  process.on('unhandledRejection', die);
  process.on('uncaughtException', die);
  // The whole script is bounded too: a client that retries forever (a Redis that never answers) ends it.
  setTimeout(() => die(new Error(`still running after ${limitMs / 1000} s`)), limitMs).unref();
}
