import { useState } from 'react';
import { Alert, Badge, ButtonLink, PageHeader, Panel } from '@/components';
import { useCurrentUser, usePermissions } from '@/features/auth';
import { useChangePassword } from '../hooks/useAccounts';
import { type PasswordChangeValues, ROLES, toPasswordChangeRequest } from '../types';
import { PasswordChangeForm } from './PasswordChangeForm';

function WhoYouAre() {
  const me = useCurrentUser().data;
  const { canOperate, canEdit } = usePermissions();
  const role = ROLES.find((r) => r.value === me?.role);
  return (
    <dl className="facts">
      <dt>User name</dt>
      <dd>
        {me?.username} {me?.is_superuser ? <Badge tone="info">superuser</Badge> : null}
      </dd>
      <dt>Role</dt>
      <dd>{role ? role.label : <span className="muted">unknown</span>}</dd>
      <dt>More</dt>
      <dd className="inline-list">
        <ButtonLink to="/tokens" size="small">
          Your API tokens
        </ButtonLink>{' '}
        {canOperate ? (
          <ButtonLink to={`/audit?actor=${encodeURIComponent(me?.username ?? '')}`} size="small">
            Your actions in the audit log
          </ButtonLink>
        ) : null}{' '}
        {canEdit ? (
          <ButtonLink to="/users" size="small">
            Users
          </ButtonLink>
        ) : null}
      </dd>
    </dl>
  );
}

export function AccountPage() {
  const change = useChangePassword();
  const [changed, setChanged] = useState<string | null>(null);
  const onChange = async (values: PasswordChangeValues) => {
    setChanged(null);
    await change.mutateAsync(toPasswordChangeRequest(values));
    setChanged(values.revoke_tokens ? 'Password changed, and your API tokens revoked.' : 'Password changed.');
  };
  return (
    <>
      <PageHeader title="Your account" description="Who you are signed in as, and your password." />
      <div className="stack">
        <Panel title="Signed in as">
          <WhoYouAre />
        </Panel>
        <Panel title="Change your password">
          {changed ? <Alert tone="success">{changed}</Alert> : null}
          <PasswordChangeForm onSubmit={onChange} />
        </Panel>
      </div>
    </>
  );
}
