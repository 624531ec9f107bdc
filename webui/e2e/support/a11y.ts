import AxeBuilder from '@axe-core/playwright';
import type { Page } from '@playwright/test';

/** WCAG 2.1 A and AA, the level the console promises. */
const TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];

/**
 * The serious and critical axe violations on the page as it is now, one line each
 * ("color-contrast: Elements must meet … at .badge-info"), empty when there are none.
 */
export async function seriousViolations(page: Page): Promise<string[]> {
  const results = await new AxeBuilder({ page }).withTags(TAGS).analyze();
  return results.violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => {
      const targets = violation.nodes.slice(0, 4).map((node) => node.target.join(' ')).join(' | ');
      return `${violation.id} (${violation.impact}): ${violation.help} at ${targets}`;
    });
}
