import { resolve } from 'node:path';

/** Where e2e screenshots, traces and the report go: tests/artifacts/e2e at the repository root. */
export const ARTIFACTS = resolve(import.meta.dirname, '../../../tests/artifacts/e2e');
