import type { ReactNode } from 'react';

type AlertProps = { tone: 'error' | 'warning' | 'success' | 'info'; title?: string; children?: ReactNode };

/** A message block; errors interrupt (role=alert), the rest are polite (role=status). */
export function Alert({ tone, title, children }: AlertProps) {
  return (
    <div className={`alert alert-${tone}`} role={tone === 'error' ? 'alert' : 'status'}>
      {title ? <p className="alert-title">{title}</p> : null}
      {children ? <div className="alert-body">{children}</div> : null}
    </div>
  );
}
