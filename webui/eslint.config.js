import js from '@eslint/js';
import reactHooks from 'eslint-plugin-react-hooks';
import globals from 'globals';
import tseslint from 'typescript-eslint';

// Features never import each other: anything two features share moves to src/components or
// src/lib, and pages that combine features are wired in src/app.
const FEATURES = ['auth', 'services', 'pools', 'certificates', 'revisions', 'nodes', 'ha', 'telemetry', 'dashboard'];
// Except these, which any feature may use through their index: who is signed in and what they
// may do (auth), and the live figures and health (telemetry).
const FOUNDATIONS = ['auth', 'telemetry'];

const noEscapingRelative = {
  group: ['../../*', '../../../*', '../../../../*'],
  message: 'Leave a feature through the "@/" alias (shared code in @/components or @/lib).',
};

const featureBoundaries = FEATURES.map((feature) => ({
  files: [`src/features/${feature}/**/*.{ts,tsx}`],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          {
            group: ['@/features/*', `!@/features/${feature}`, `!@/features/${feature}/**`, ...FOUNDATIONS.filter((f) => f !== feature).map((f) => `!@/features/${f}`)],
            message: `Features must not import each other (this is "${feature}").`,
          },
          { group: ['@/app', '@/app/*'], message: 'Features must not import the app shell.' },
          noEscapingRelative,
        ],
      },
    ],
  },
}));

const sharedLayer = {
  files: ['src/components/**/*.{ts,tsx}', 'src/lib/**/*.{ts,tsx}'],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          { group: ['@/features/*', '@/app', '@/app/*'], message: 'Shared code must not depend on features or the app.' },
          { group: ['../features/*', '../../features/*', '../app/*', '../../app/*'], message: 'Shared code must not depend on features or the app.' },
        ],
      },
    ],
  },
};

export default tseslint.config(
  { ignores: ['dist', 'node_modules', 'playwright-report', 'test-results', 'src/lib/api/schema.d.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.{ts,tsx}'],
    languageOptions: { globals: { ...globals.browser } },
    plugins: { 'react-hooks': reactHooks },
    rules: {
      ...reactHooks.configs.recommended.rules,
      'no-restricted-syntax': [
        'error',
        { selector: 'ExportDefaultDeclaration', message: 'Use named exports.' },
      ],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  {
    // Tool configs must export a default.
    files: ['*.config.{ts,js}'],
    languageOptions: { globals: { ...globals.node } },
    rules: { 'no-restricted-syntax': 'off' },
  },
  { files: ['scripts/**/*.mjs', 'e2e/**/*.ts'], languageOptions: { globals: { ...globals.node } } },
  ...featureBoundaries,
  sharedLayer,
);
