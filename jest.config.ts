import { readFileSync } from 'node:fs';
import type { Config } from 'jest';
import { pathsToModuleNameMapper } from 'ts-jest';

// The lib aliases as tsconfig.json declares them, the one place they are written. Read from the working directory, the
// project's root where every script runs Jest: Node 24 loads this file as an ES module, without `__dirname`.
const moduleNameMapper = {
  ...pathsToModuleNameMapper(
    (
      JSON.parse(readFileSync('tsconfig.json', 'utf8')) as {
        compilerOptions: { paths: Record<string, string[]> };
      }
    ).compilerOptions.paths,
    { prefix: '<rootDir>/' },
  ),
  // The reference LiveKit agent (examples/livekit-agent) and the SDK (sdk/typescript) are ES module packages: their
  // relative imports name the `.js` their build emits, found here as the `.ts` source (a `.js` file that exists is
  // still found first).
  '^(\\.{1,2}/.*)\\.js$': '$1',
};

const transform = { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.spec.json' }] } as const;

/** Run through `npm run test:unit` / `npm run test:e2e`. */
const config: Config = {
  // A global option (Jest ignores it inside a project). Tests that wait longer (crawls, restarts) set their own;
  // on a loaded 2-core machine Jest's 5 s default is too tight for booting the API and worker.
  testTimeout: 30_000,
  projects: [
    {
      displayName: 'unit',
      rootDir: '.',
      testEnvironment: 'node',
      testMatch: [
        '<rootDir>/apps/**/*.spec.ts',
        '<rootDir>/libs/**/*.spec.ts',
        '<rootDir>/test/**/*.spec.ts',
        '<rootDir>/examples/livekit-agent/test/**/*.spec.ts',
        '<rootDir>/sdk/typescript/test/**/*.spec.ts',
      ],
      moduleNameMapper,
      transform,
    },
    {
      displayName: 'e2e',
      rootDir: '.',
      testEnvironment: 'node',
      testMatch: [
        '<rootDir>/test/**/*.e2e-spec.ts',
        '<rootDir>/examples/livekit-agent/test/**/*.e2e-spec.ts',
        '<rootDir>/sdk/typescript/test/**/*.e2e-spec.ts',
        '<rootDir>/examples/web-call/test/**/*.e2e-spec.ts',
      ],
      moduleNameMapper,
      transform,
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
  ],
};

export default config;
