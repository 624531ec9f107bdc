import { defineConfig } from '@playwright/test';
import { ARTIFACTS } from './e2e/support/paths';

// Drives Debian's Chromium (never a downloaded browser) against a running Fulcrum at
// FULCRUM_URL: the API and the built console on one origin.
export default defineConfig({
  testDir: 'e2e',
  outputDir: `${ARTIFACTS}/test-results`,
  timeout: 180_000,
  expect: { timeout: 10_000 },
  fullyParallel: false,
  workers: 1,
  retries: 0,
  forbidOnly: !!process.env.CI,
  reporter: [['list'], ['html', { outputFolder: `${ARTIFACTS}/report`, open: 'never' }]],
  use: {
    baseURL: process.env.FULCRUM_URL ?? 'http://127.0.0.1:8000',
    browserName: 'chromium',
    viewport: { width: 1280, height: 800 },
    colorScheme: 'light',
    screenshot: 'only-on-failure',
    trace: 'retain-on-failure',
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    },
  },
});
