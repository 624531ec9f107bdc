import { errorMessage } from '@/lib/api';
import { Alert } from './Alert';
import { ConfirmButton } from './ConfirmButton';

/**
 * Revoking a secret (an API token, a join code): a button that asks once more, shown while
 * there is something to revoke, and the refusal if the API refused.
 */
export function RevokeButton({ subject, revocable, busy, error, onRevoke }: { subject: string; revocable: boolean; busy: boolean; error: unknown; onRevoke: () => void }) {
  return (
    <>
      {revocable ? (
        <ConfirmButton size="small" subject={subject} confirmLabel="Yes, revoke" busy={busy} onConfirm={onRevoke}>
          Revoke
        </ConfirmButton>
      ) : null}
      {error ? (
        <Alert tone="error" title="Not revoked">
          {errorMessage(error)}
        </Alert>
      ) : null}
    </>
  );
}
