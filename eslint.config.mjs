import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.data/**', 'bench/results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-imports': 'off',
    },
  },
  {
    // Layer rules (DESIGN §1): domain is pure; api and workers meet only through domain and db.
    files: ['domain/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [
                'express',
                'bullmq',
                'knex',
                'objection',
                'pg',
                'ioredis',
                '**/api/**',
                '**/workers/**',
                '**/db/**',
                '**/infra/**',
              ],
              message: 'domain/ stays pure',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['api/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { patterns: [{ group: ['**/workers/**'], message: 'api/ never imports workers/' }] },
      ],
    },
  },
  {
    files: ['workers/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { patterns: [{ group: ['**/api/**', 'express'], message: 'workers/ never imports api/' }] },
      ],
    },
  },
  {
    // infra/ (configuration, logging, store connections) sits below everything but domain/.
    files: ['infra/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/api/**', '**/workers/**', '**/db/**', 'express'],
              message: 'infra/ sits below api/, workers/ and db/',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['db/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              // db/ returns results and errors; statuses, headers and bodies are the API's (issue 25).
              group: ['**/api/**', '**/workers/**', 'express'],
              message: 'db/ sits below api/ and workers/',
            },
          ],
        },
      ],
    },
  },
);
