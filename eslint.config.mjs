// Lint for faults the compiler does not catch: promises nobody awaits or that are passed where a callback's result
// is ignored, switches over a union that miss a member, and imports that exist only for their types. Type-aware, so
// it reads tsconfig.json (every app, lib, test, bench and script). `npm run lint`; .ci/run runs it before the tests.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const LEAVES_ITS_APP_OR_LIB = {
  regex: '^(\\.\\./){2,}',
  message:
    'This import leaves its app or lib: apps never import each other, libs never import apps, and another lib is ' +
    'imported as @app/<lib>, by what its index.ts exports.',
};

/** The import rules of a layer's product files (ESLint applies the last matching config's rule, so each repeats the first). */
function layer(files, ignores, ...patterns) {
  return {
    files,
    ignores: ['**/*.spec.ts', ...ignores],
    rules: { 'no-restricted-imports': ['error', { patterns: [LEAVES_ITS_APP_OR_LIB, ...patterns] }] },
  };
}

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'coverage/**',
      'test/generated-client/**',
      'examples/**/dist/**',
      'sdk/**/dist/**',
      'sdk/typescript/test/readme-session/**',
      // The document benchmarks' transpiled copy of libs/extraction (see bench/support/compiled-thread-hook.ts).
      'bench/.cache/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-for-in-array': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': [
        'error',
        { considerDefaultExhaustiveForUnions: true, requireDefaultForNonUnion: false },
      ],
      '@typescript-eslint/consistent-type-imports': [
        'error',
        // Nest reads constructor parameter types at run time (emitDecoratorMetadata): an import used only as a
        // parameter's type must stay a value import, or injection breaks. Inline `type` keeps that decision per name.
        { prefer: 'type-imports', fixStyle: 'inline-type-imports', disallowTypeAnnotations: false },
      ],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // Turned off, each for its reason:
      // - `any` marks where a library's generic is erased on purpose (a BullMQ queue of any job, rows as loose as
      //   DataSource.query's) and the JSON bodies tests and benchmarks read; `unknown` there only adds casts.
      '@typescript-eslint/no-explicit-any': 'off',
      // - Control characters in a pattern are what those patterns are for: the code strips or refuses them.
      'no-control-regex': 'off',
      // - `require` reads the plain JavaScript of scripts/ (shared with `npm start`, untyped) and paths known only at
      //   run time; each such call asserts the type it gets.
      '@typescript-eslint/no-require-imports': 'off',
    },
  },
  // Layers. Every app and lib file sits at most one folder below its src/, so a relative import that climbs two folders
  // has left its app or lib: apps never import each other, libs never import apps, and a lib is reached only as
  // `@app/<lib>` (the alias names libs alone). Tests may reach test/support.
  layer(['apps/**/*.ts', 'libs/**/*.ts'], ['libs/*/test/**']),
  // An API feature uses another by its module and the service that module exports, never by its other files; the
  // folders every feature shares (auth/, http/, idempotency/, rate-limit/) are open to all.
  layer(['apps/api/src/*/**/*.ts'], [], {
    regex: '^\\.\\./(?!\\.\\./|(auth|http|idempotency|rate-limit)/)[^/]+/(?![^/]+\\.(module|service)$)',
    message:
      "Another feature's internals: import its module (for the Nest imports) and the service it exports, or move " +
      'what both need to a lib or to one of the shared folders.',
  }),
  // A worker feature imports no other: what two share is at the worker's root or in a lib. The maintenance queue's
  // own work is what belongs to no feature; a feature's sweeps are handlers on its own services, so maintenance/
  // reaches into no feature folder either.
  layer(['apps/worker/src/*/**/*.ts'], [], {
    regex: '^\\.\\./(?!\\.\\./)[^/]+/',
    message:
      "A worker feature imports no other feature: share through a lib or the worker's root. A feature's sweep is a " +
      "@HandlesJob method of that feature's service, and MaintenanceSchedule registers it from its definition in " +
      'libs/jobs.',
  }),
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    languageOptions: {
      globals: {
        require: 'readonly',
        module: 'writable',
        process: 'readonly',
        console: 'readonly',
        __dirname: 'readonly',
        Buffer: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        URL: 'readonly',
        fetch: 'readonly',
        AbortSignal: 'readonly',
        AbortController: 'readonly',
        performance: 'readonly',
      },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off', 'no-control-regex': 'off' },
  },
  {
    // The web-call example's page runs in a browser.
    files: ['examples/web-call/page/**/*.js'],
    languageOptions: {
      globals: { document: 'readonly', EventSource: 'readonly', fetch: 'readonly', JSON: 'readonly' },
    },
  },
);
