import { type ComponentProps, type ReactNode, useEffect, useRef } from 'react';
import { Alert } from './Alert';
import { Button } from './Button';
import { CopyButton } from './CopyButton';

/**
 * A secret the API shows this once (it keeps only a hash): what it is for, the value with a
 * copy button, and the way to dismiss it. Takes the focus so a screen reader reads it at once.
 */
export function SecretReveal({
  title,
  tone = 'warning',
  children,
  secret,
  secretLabel,
  copyLabel,
  dismissLabel,
  onDismiss,
}: {
  title: string;
  tone?: ComponentProps<typeof Alert>['tone'];
  children: ReactNode;
  secret: string;
  secretLabel: string;
  copyLabel: string;
  dismissLabel: string;
  onDismiss: () => void;
}) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => box.current?.focus(), []);
  return (
    <div ref={box} tabIndex={-1}>
      <Alert tone={tone} title={title}>
        {children}
        <div className="token">
          <code aria-label={secretLabel}>{secret}</code>
          <CopyButton text={secret} label={copyLabel} />
        </div>
        <Button size="small" variant="ghost" onClick={onDismiss}>
          {dismissLabel}
        </Button>
      </Alert>
    </div>
  );
}
