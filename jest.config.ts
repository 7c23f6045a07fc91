import type { Config } from 'jest';

const moduleNameMapper = {
  '^@app/(config|contracts|database|extraction|jobs|outbound-http|platform)$': '<rootDir>/libs/$1/src',
  '^@app/(config|contracts|database|extraction|jobs|outbound-http|platform)/(.*)$': '<rootDir>/libs/$1/src/$2',
};

const transform = { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.spec.json' }] } as const;

const config: Config = {
  projects: [
    {
      displayName: 'unit',
      rootDir: '.',
      testEnvironment: 'node',
      testMatch: ['<rootDir>/apps/**/*.spec.ts', '<rootDir>/libs/**/*.spec.ts'],
      moduleNameMapper,
      transform,
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
