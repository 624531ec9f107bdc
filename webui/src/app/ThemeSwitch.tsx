import { useId, useState } from 'react';
import { chooseTheme, storedTheme, type Theme, THEMES } from './theme';

/** System / Light / Dark as a labelled radio group; the choice applies at once and is remembered. */
export function ThemeSwitch() {
  const [theme, setTheme] = useState<Theme>(storedTheme);
  const name = useId();
  const pick = (next: Theme) => {
    setTheme(next);
    chooseTheme(next);
  };
  return (
    <fieldset className="theme-switch">
      <legend>Theme</legend>
      <div className="theme-options">
        {THEMES.map((option) => (
          <label key={option.value} className="theme-option">
            <input type="radio" name={name} value={option.value} checked={theme === option.value} onChange={() => pick(option.value)} />
            <span>{option.label}</span>
          </label>
        ))}
      </div>
    </fieldset>
  );
}
