import { useEffect, useRef } from 'react';
import { Alert, Button, CopyButton } from '@/components';
import type { ApiTokenCreated } from '../types';

/** The new token's secret, shown this once: the API keeps only its hash. */
export function TokenReveal({ token, onDismiss }: { token: ApiTokenCreated; onDismiss: () => void }) {
  const heading = useRef<HTMLDivElement>(null);
  useEffect(() => heading.current?.focus(), []);
  return (
    <div ref={heading} tabIndex={-1}>
      <Alert tone="warning" title={`Token ${token.name} created: copy its secret now`}>
        <p>
          Send it as <code>Authorization: Bearer &lt;token&gt;</code>. <strong>It will not be shown again</strong>: the appliance keeps
          only a hash. Whoever holds it acts as you, with the role {token.role}.
        </p>
        <div className="token">
          <code aria-label={`Secret of token ${token.name}`} data-testid="token-secret">
            {token.token}
          </code>
          <CopyButton text={token.token} label="Copy secret" />
        </div>
        <Button size="small" variant="ghost" onClick={onDismiss}>
          I have stored the secret
        </Button>
      </Alert>
    </div>
  );
}
