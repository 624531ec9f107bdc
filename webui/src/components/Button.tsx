import type { ComponentProps } from 'react';

type ButtonProps = ComponentProps<'button'> & {
  variant?: 'primary' | 'secondary' | 'danger' | 'ghost';
  size?: 'normal' | 'small';
  /** Shows that the action is under way and blocks a second click. */
  busy?: boolean;
};

export function Button({ variant = 'secondary', size = 'normal', busy = false, className, disabled, children, type = 'button', ...rest }: ButtonProps) {
  const classes = ['button', `button-${variant}`, size === 'small' ? 'button-small' : null, className];
  return (
    <button
      type={type}
      className={classes.filter(Boolean).join(' ')}
      disabled={disabled || busy}
      aria-busy={busy || undefined}
      {...rest}
    >
      {busy ? <span className="spinner spinner-inline" aria-hidden="true" /> : null}
      {children}
    </button>
  );
}
