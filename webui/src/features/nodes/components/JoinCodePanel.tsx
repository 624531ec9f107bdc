import { useState } from 'react';
import { ActionsHeader, Alert, Badge, type BadgeTone, Button, ErrorState, FormActions, RevokeButton, SecretReveal, TableWrap } from '@/components';
import { errorMessage } from '@/lib/api';
import { formatDateTime } from '@/lib/format';
import { useCreateJoinCode, useJoinCodes, useRevokeJoinCode } from '../hooks/useNodes';
import type { JoinCode, JoinCodeCreated } from '../types';

const STATE_TONES: Record<string, BadgeTone> = { usable: 'success', used: 'neutral', expired: 'warning' };

/** The new code, shown this once, with what to do with it. */
function JoinCodeReveal({ code, onDismiss }: { code: JoinCodeCreated; onDismiss: () => void }) {
  return (
    <SecretReveal
      tone="success"
      title="Join code made"
      secret={code.code}
      secretLabel="Join code"
      copyLabel="Copy code"
      dismissLabel="I have noted the code"
      onDismiss={onDismiss}
    >
      <p>
        At the new appliance&apos;s first boot, choose <strong>join a cluster</strong> and give it this appliance&apos;s management address and
        this code (or put <code>join_code=</code> in its <code>setup.conf</code>). It works once, until {formatDateTime(code.expires_at)}.{' '}
        <strong>It will not be shown again.</strong>
      </p>
    </SecretReveal>
  );
}

function JoinCodeRow({ code }: { code: JoinCode }) {
  const revoke = useRevokeJoinCode();
  return (
    <tr>
      <th scope="row" className="mono">
        {code.code_id}…
      </th>
      <td>
        <Badge tone={STATE_TONES[code.state] ?? 'neutral'}>{code.state}</Badge>
        {code.node ? <div className="cell-note">joined: {code.node}</div> : null}
      </td>
      <td>{code.created_by ?? <span className="muted">unknown</span>}</td>
      <td className="nowrap">{formatDateTime(code.expires_at)}</td>
      <td className="cell-actions">
        <RevokeButton
          subject={`join code ${code.code_id}`}
          revocable={code.state === 'usable'}
          busy={revoke.isPending}
          error={revoke.error}
          onRevoke={() => revoke.mutate(code.id)}
        />
      </td>
    </tr>
  );
}

/** Nodes → Add an appliance (admins): make a one-time join code, see the codes made and revoke them. */
export function JoinCodePanel() {
  const codes = useJoinCodes(true);
  const create = useCreateJoinCode();
  const [created, setCreated] = useState<JoinCodeCreated | null>(null);
  return (
    <>
      <p>
        Install the new appliance from the same image, then join it to this cluster with a one-time code: it becomes a node, and keeps its own host
        name, addresses and HA priorities.
      </p>
      {created ? <JoinCodeReveal code={created} onDismiss={() => setCreated(null)} /> : null}
      {create.isError ? (
        <Alert tone="error" title="No code made">
          {errorMessage(create.error)}
        </Alert>
      ) : null}
      <FormActions>
        <Button variant="primary" busy={create.isPending} onClick={() => create.mutate(undefined, { onSuccess: setCreated })}>
          Make a join code
        </Button>
      </FormActions>
      {codes.isError ? <ErrorState error={codes.error} onRetry={() => void codes.refetch()} /> : null}
      {codes.data?.length ? (
        <TableWrap label="Join codes">
          <table className="table">
            <caption className="visually-hidden">Join codes</caption>
            <thead>
              <tr>
                <th scope="col">Code</th>
                <th scope="col">State</th>
                <th scope="col">Made by</th>
                <th scope="col">Expires</th>
                <ActionsHeader />
              </tr>
            </thead>
            <tbody>
              {codes.data.map((code) => (
                <JoinCodeRow key={code.id} code={code} />
              ))}
            </tbody>
          </table>
        </TableWrap>
      ) : null}
    </>
  );
}
