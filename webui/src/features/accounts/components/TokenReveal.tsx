import { SecretReveal } from '@/components';
import type { ApiTokenCreated } from '../types';

/** The new token's secret, shown this once: the API keeps only its hash. */
export function TokenReveal({ token, onDismiss }: { token: ApiTokenCreated; onDismiss: () => void }) {
  return (
    <SecretReveal
      title={`Token ${token.name} created: copy its secret now`}
      secret={token.token}
      secretLabel={`Secret of token ${token.name}`}
      copyLabel="Copy secret"
      dismissLabel="I have stored the secret"
      onDismiss={onDismiss}
    >
      <p>
        Send it as <code>Authorization: Bearer &lt;token&gt;</code>. <strong>It will not be shown again</strong>: the appliance keeps only
        a hash. Whoever holds it acts as you, with the role {token.role}.
      </p>
    </SecretReveal>
  );
}
