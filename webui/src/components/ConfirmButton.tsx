import { type ReactNode, useState } from 'react';
import { Button } from './Button';

type ConfirmButtonProps = {
  /** What the first click says, e.g. "Delete". */
  children: ReactNode;
  /** Names the target for screen readers and the confirm step, e.g. "pool web". */
  subject: string;
  /** Accessible name of the first button; defaults to "<children> <subject>". */
  label?: string;
  confirmLabel?: string;
  onConfirm: () => void;
  busy?: boolean;
  size?: 'normal' | 'small';
};

/** A destructive action that needs a second, explicit click. */
export function ConfirmButton({ children, subject, label, confirmLabel = 'Yes, delete', onConfirm, busy, size = 'normal' }: ConfirmButtonProps) {
  const [asking, setAsking] = useState(false);
  if (!asking) {
    return (
      <Button variant="ghost" size={size} className="button-danger-text" onClick={() => setAsking(true)} aria-label={label ?? `${String(children)} ${subject}`}>
        {children}
      </Button>
    );
  }
  return (
    <span className="confirm" role="group" aria-label={`Confirm: ${String(children).toLowerCase()} ${subject}`}>
      <Button
        variant="danger"
        size={size}
        busy={busy}
        autoFocus
        onClick={() => {
          onConfirm();
          setAsking(false);
        }}
        aria-label={`${confirmLabel}: ${subject}`}
      >
        {confirmLabel}
      </Button>
      <Button variant="ghost" size={size} onClick={() => setAsking(false)}>
        Cancel
      </Button>
    </span>
  );
}
