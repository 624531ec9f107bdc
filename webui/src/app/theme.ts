/**
 * The console's colour theme: the OS setting (System) unless the person picked Light or Dark,
 * remembered in this browser. global.css reads `data-theme` on <html>; without it the
 * `prefers-color-scheme` media query decides.
 */
export type Theme = 'system' | 'light' | 'dark';

export const THEMES: readonly { value: Theme; label: string }[] = [
  { value: 'system', label: 'System' },
  { value: 'light', label: 'Light' },
  { value: 'dark', label: 'Dark' },
];

const STORAGE_KEY = 'fulcrum-theme';

function isTheme(value: unknown): value is Theme {
  return value === 'system' || value === 'light' || value === 'dark';
}

/** The stored choice; System when none was made or storage is unavailable (private mode). */
export function storedTheme(): Theme {
  try {
    const value = window.localStorage.getItem(STORAGE_KEY);
    return isTheme(value) ? value : 'system';
  } catch {
    return 'system';
  }
}

/** Shows `theme` now (sets or clears `data-theme` on <html>). */
export function applyTheme(theme: Theme): void {
  const root = document.documentElement;
  if (theme === 'system') root.removeAttribute('data-theme');
  else root.setAttribute('data-theme', theme);
}

/** Shows `theme` and remembers it for the next visit. */
export function chooseTheme(theme: Theme): void {
  applyTheme(theme);
  try {
    if (theme === 'system') window.localStorage.removeItem(STORAGE_KEY);
    else window.localStorage.setItem(STORAGE_KEY, theme);
  } catch {
    // Storage refused: the choice holds for this page only.
  }
}
