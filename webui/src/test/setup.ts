import '@testing-library/jest-dom/vitest';
import { cleanup } from '@testing-library/react';
import { afterEach } from 'vitest';
import { installFetchMock, resetApiMock } from './mockApi';

// The API client captures fetch when its module loads, so the mock goes in before any test.
installFetchMock();

afterEach(() => {
  cleanup();
  resetApiMock();
});
