// Lint: eslint's and typescript-eslint's recommended rules, without type information (fast).
import js from '@eslint/js'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      '.cache/**',
      'coverage/**',
      '.state/**',
      'test/fixtures/**',
      'features/fixtures/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        URL: 'readonly',
        Buffer: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    files: ['src/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.name=/^mkdir(Sync)?$/] Property[key.name='recursive'][value.value=true]",
          message:
            "makeDirectories (src/fs/make-directories.ts): node's recursive mkdir gives every parent the mode and loops on /proc.",
        },
      ],
    },
  },
  {
    // The status page's script runs in the operator's browser (served by the gateway).
    files: ['web/**/*.js'],
    languageOptions: {
      sourceType: 'script',
      globals: { document: 'readonly', window: 'readonly', fetch: 'readonly' },
    },
  },
)
