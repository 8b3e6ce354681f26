// Lint rules that protect the design: promises are awaited, and imports point one way
// (contracts ← services ← activities ← workflows; deploy and test may import anything).
import tseslint from 'typescript-eslint';

const restrict = (patterns, message) => ['error', { patterns: patterns.map((group) => ({ group: [group], message })) }];

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
    files: ['activities/**/*.ts'],
    rules: { 'no-restricted-imports': restrict(['**/workflows/**', '**/deploy/**'], 'activities/ must not import workflows/ or deploy/.') },
  },
  {
    files: ['workflows/**/*.ts'],
    // The process's wiring (entry point, HTTP/2 endpoint, registration, activity wiring) is not workflow code.
    ignores: ['workflows/main.ts', 'workflows/endpoint.ts', 'workflows/registration.ts', 'workflows/activities.ts'],
    rules: {
      'no-restricted-imports': restrict(
        ['postgres', 'fastify', 'node:*', '**/services/shared/db.ts', '**/deploy/**'],
        'Workflow files sequence activities: no database driver, Node built-ins or Fastify (workflows/main.ts, endpoint.ts, registration.ts and activities.ts wire the process).',
      ),
    },
  },
);
