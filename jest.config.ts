import type { Config } from 'jest';

const moduleNameMapper = {
  '^@app/(config|contracts|database|extraction|jobs|outbound-http|platform|crypto|telephony|tools|calls)$':
    '<rootDir>/libs/$1/src',
  '^@app/(config|contracts|database|extraction|jobs|outbound-http|platform|crypto|telephony|tools|calls)/(.*)$':
    '<rootDir>/libs/$1/src/$2',
};

/**
 * Dependencies published only as ES modules. Node (20.19 and later) loads them with `require`; Jest's module
 * loader does not, so they are compiled to CommonJS for the tests.
 */
const ESM_ONLY_PACKAGES = ['content-disposition'];

const transform = {
  '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.spec.json' }],
  [`/node_modules/(?:.*/)?(?:${ESM_ONLY_PACKAGES.join('|')})/.+\\.js$`]: [
    'ts-jest',
    { tsconfig: { allowJs: true, module: 'commonjs', isolatedModules: true } },
  ],
} as const;
const transformIgnorePatterns = [`/node_modules/(?!(?:.*/)?(?:${ESM_ONLY_PACKAGES.join('|')})/)`];

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
      testMatch: ['<rootDir>/apps/**/*.spec.ts', '<rootDir>/libs/**/*.spec.ts'],
      moduleNameMapper,
      transform,
      transformIgnorePatterns,
    },
    {
      displayName: 'e2e',
      rootDir: '.',
      testEnvironment: 'node',
      testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
      moduleNameMapper,
      transform,
      transformIgnorePatterns,
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
  ],
};

export default config;
