import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'cdk.out/', '.local/', 'coverage/', 'bench/tmp/', 'docs/**/*.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'off',
    },
  },
  {
    // Type-aware rules: a promise nobody awaits (or one passed where a callback's result is
    // ignored) loses its error and, in Lambda, may be frozen mid-flight.
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
    },
  },
  {
    // The domain takes plain data: configuration and environment are read once, outside it
    // (lib/runtime/config.ts). Imports are checked by dependency-cruiser (.ci/dependency-rules.cjs).
    files: ['lib/cases/**/*.ts', 'lib/uploads/**/*.ts', 'lib/accounts/**/*.ts', 'lib/auth/**/*.ts', 'lib/webhooks/**/*.ts', 'lib/*.ts'],
    rules: {
      'no-restricted-globals': ['error', { name: 'process', message: 'The domain reads no environment: take the value as a parameter.' }],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', module: 'writable', require: 'readonly' } },
  },
);
