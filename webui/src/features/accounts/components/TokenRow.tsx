import { Badge, type BadgeTone, RevokeButton } from '@/components';
import { formatDateTime } from '@/lib/format';
import { useRevokeToken } from '../hooks/useAccounts';
import type { ApiToken } from '../types';

const STATE_TONES: Record<string, BadgeTone> = { active: 'success', expired: 'warning', revoked: 'neutral' };

function LastUse({ token }: { token: ApiToken }) {
  if (!token.last_used_at) return <span className="muted">never</span>;
  return (
    <>
      {formatDateTime(token.last_used_at)}
      {token.last_used_from ? <div className="cell-note mono">from {token.last_used_from}</div> : null}
    </>
  );
}

export function TokenRow({ token, showOwner }: { token: ApiToken; showOwner: boolean }) {
  const revoke = useRevokeToken();
  return (
    <tr>
      <th scope="row">
        {token.name}
        <div className="cell-note mono">{token.prefix}…</div>
      </th>
      {showOwner ? <td>{token.owner}</td> : null}
      <td>{token.role}</td>
      <td>
        <Badge tone={STATE_TONES[token.state] ?? 'neutral'}>{token.state}</Badge>
        {token.revoked_at ? <div className="cell-note">{formatDateTime(token.revoked_at)}</div> : null}
      </td>
      <td className="nowrap">{formatDateTime(token.created_at)}</td>
      <td className="nowrap">{formatDateTime(token.expires_at, 'never')}</td>
      <td className="nowrap">
        <LastUse token={token} />
      </td>
      <td className="cell-actions">
        <RevokeButton
          subject={`token ${token.name}`}
          revocable={token.state === 'active'}
          busy={revoke.isPending}
          error={revoke.error}
          onRevoke={() => revoke.mutate(token.id)}
        />
      </td>
    </tr>
  );
}
