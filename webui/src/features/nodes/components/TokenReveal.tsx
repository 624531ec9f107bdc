import { Alert, Button, CopyButton } from '@/components';
import type { NodeCreated } from '../types';

/** The new node's agent token, shown this once: the API keeps only its hash. */
export function TokenReveal({ node, onDismiss }: { node: NodeCreated; onDismiss: () => void }) {
  return (
    <Alert tone="success" title={`Node ${node.name} added`}>
      <p>
        Copy its agent token now and put it in the agent's configuration. <strong>It will not be shown again.</strong>
      </p>
      <div className="token">
        <code aria-label={`Agent token for ${node.name}`}>{node.token}</code>
        <CopyButton text={node.token} label="Copy token" />
      </div>
      <Button size="small" variant="ghost" onClick={onDismiss}>
        I have stored the token
      </Button>
    </Alert>
  );
}
