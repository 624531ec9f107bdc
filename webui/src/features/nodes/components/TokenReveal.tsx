import { SecretReveal } from '@/components';
import type { NodeCreated } from '../types';

/** The new node's agent token, shown this once: the API keeps only its hash. */
export function TokenReveal({ node, onDismiss }: { node: NodeCreated; onDismiss: () => void }) {
  return (
    <SecretReveal
      tone="success"
      title={`Node ${node.name} added`}
      secret={node.token}
      secretLabel={`Agent token for ${node.name}`}
      copyLabel="Copy token"
      dismissLabel="I have stored the token"
      onDismiss={onDismiss}
    >
      <p>
        Copy its agent token now and put it in the agent's configuration. <strong>It will not be shown again.</strong>
      </p>
    </SecretReveal>
  );
}
