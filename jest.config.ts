import type { Config } from 'jest';

const moduleNameMapper = {
  '^@app/(config|contracts|database|extraction|jobs|outbound-http|platform|crypto|telephony|tools)$': '<rootDir>/libs/$1/src',
  '^@app/(config|contracts|database|extraction|jobs|outbound-http|platform|crypto|telephony|tools)/(.*)$': '<rootDir>/libs/$1/src/$2',
};

const transform = { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.spec.json' }] } as const;

/**
 * Run through `npm run test:unit` / `npm run test:e2e`. Unit tests need NODE_OPTIONS=--experimental-vm-modules
 * (the script sets it): unpdf loads PDF.js with a dynamic import(), which jest's module sandbox refuses otherwise.
 */
const config: Config = {
  projects: [
    {
      displayName: 'unit',
      rootDir: '.',
      testEnvironment: 'node',
      testMatch: ['<rootDir>/apps/**/*.spec.ts', '<rootDir>/libs/**/*.spec.ts'],
      moduleNameMapper,
      transform,
      // Some units start worker threads; on a loaded 2-core machine Jest's 5 s default is too tight.
      testTimeout: 20_000,
    },
    {
      displayName: 'e2e',
      rootDir: '.',
      testEnvironment: 'node',
      testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
      moduleNameMapper,
      transform,
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
      testTimeout: 30_000,
    },
  ],
};

export default config;
