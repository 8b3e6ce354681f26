// Lint rules that protect the design: promises are awaited, and imports point one way
// (contracts ← services ← activities ← workflows; deploy and test may import anything).
import tseslint from 'typescript-eslint';

const restrict = (patterns, message) => ['error', { patterns: patterns.map((group) => ({ group: [group], message })) }];

// Only the API imports the API: its routes parse, call a use case and answer, and the use cases live in their domain
// folders (services/invoices, services/payments, …), where the batch and the workflows call them too. Matches
// services/api from anywhere and ../api, ../../api, … (services/api as seen from inside services/).
const NOT_THE_API = {
  regex: '(^|/)(services/api|(\\.\\./)+api)(/|$)',
  message: 'Only services/api imports services/api: put the use case or the shared helper in its domain folder or services/shared.',
};
const andNotTheApi = ([level, options]) => [level, { patterns: [...options.patterns, NOT_THE_API] }];

export default tseslint.config(
  // clients/typescript/schema.ts is generated from the OpenAPI document (npm run openapi); a test keeps it current.
  { ignores: ['node_modules/**', 'dist/**', '.data/**', 'bench-results/**', 'eslint.config.js', 'clients/typescript/schema.ts'] },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/restrict-template-expressions': 'off',
      '@typescript-eslint/no-base-to-string': 'off',
    },
  },
  {
    files: ['contracts/**/*.ts'],
    rules: {
      'no-restricted-imports': restrict(
        ['**/services/**', '**/activities/**', '**/workflows/**', '**/deploy/**', 'node:*', 'postgres', 'fastify'],
        'contracts/ imports only typebox and other contracts.',
      ),
    },
  },
  {
    files: ['services/**/*.ts'],
    // Entry points are composition roots: they wire the adapters in activities/ into the services.
    ignores: ['services/api/main.ts'],
    rules: {
      'no-restricted-imports': restrict(['**/activities/**', '**/workflows/**', '**/deploy/**'], 'services/ must not import activities/, workflows/ or deploy/.'),
    },
  },
  {
    files: ['services/**/*.ts'],
    ignores: ['services/api/**'],
    rules: {
      'no-restricted-imports': andNotTheApi(
        restrict(['**/activities/**', '**/workflows/**', '**/deploy/**'], 'services/ must not import activities/, workflows/ or deploy/.'),
      ),
    },
  },
  {
    files: ['activities/**/*.ts'],
    rules: { 'no-restricted-imports': andNotTheApi(restrict(['**/workflows/**', '**/deploy/**'], 'activities/ must not import workflows/ or deploy/.')) },
  },
  {
    files: ['workflows/**/*.ts'],
    // The process's wiring (entry point, HTTP/2 endpoint, registration, activity wiring) is not workflow code.
    ignores: ['workflows/main.ts', 'workflows/endpoint.ts', 'workflows/registration.ts', 'workflows/activities.ts'],
    rules: {
      'no-restricted-imports': andNotTheApi(
        restrict(
          ['postgres', 'fastify', 'node:*', '**/services/shared/db.ts', '**/deploy/**'],
          'Workflow files sequence activities: no database driver, Node built-ins or Fastify (workflows/main.ts, endpoint.ts, registration.ts and activities.ts wire the process).',
        ),
      ),
    },
  },
  {
    // The workflows process's wiring may import what workflow code may not, but not the API either.
    files: ['workflows/main.ts', 'workflows/endpoint.ts', 'workflows/registration.ts', 'workflows/activities.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [NOT_THE_API] }] },
  },
);
