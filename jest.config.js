import { createDefaultEsmPreset } from 'ts-jest';

const preset = createDefaultEsmPreset({ tsconfig: 'tsconfig.json' });

/** @type {import('jest').Config} */
export default {
  ...preset,
  // Node's, and a spec file's child processes die with it (test/support/child-processes.mjs)
  testEnvironment: '<rootDir>/test/support/jest.environment.mjs',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.spec.ts'],
  // the consumer apps' own specs (Nest's generated ones) run inside those apps, never here
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/consumer/fixtures/'],
  moduleNameMapper: {
    '^(\\.{1,2}/.*)\\.js$': '$1',
    '^nestjs-transactional-email$': '<rootDir>/lib/index.ts',
    '^nestjs-transactional-email/testing$': '<rootDir>/lib/kit/index.ts',
    '^nestjs-transactional-email/queue$': '<rootDir>/lib/queue/index.ts',
    '^nestjs-transactional-email/outbox$': '<rootDir>/lib/outbox/index.ts',
  },
  // one work directory per run for the consumer specs, shared by both workers (test/consumer/)
  globalSetup: '<rootDir>/test/support/jest.global-setup.mjs',
  globalTeardown: '<rootDir>/test/support/jest.global-teardown.mjs',
  // the longest files first, also on a fresh clone where Jest has no durations of a last run
  testSequencer: '<rootDir>/test/support/jest.sequencer.mjs',
  testTimeout: 20000,
  // How long a worker may take to exit at the end of the run before Jest kills it and prints "A worker
  // process has failed to exit gracefully". Jest's 500 ms is too short for a healthy exit on a machine at
  // load 20 (five workers and a second suite on two cores); a worker held by a handle left open never exits,
  // and is still reported, 5 s later. (A quiet exit takes milliseconds: test/support/jest.environment.mjs.)
  workerGracefulExitTimeout: 5000,
  // Five workers on two cores: many specs wait on servers, child processes and Redis/PostgreSQL, so
  // more files than cores keeps both cores busy (measured: 212 s with 2 workers, 179 s with 3, 162 s with 4
  // before issue 28's suite work; after it, 142 to 155 s with 4, 134 to 141 s with 5, 141 s with 6).
  maxWorkers: 5,
};
