import { useState } from 'react';
import { ActionsHeader, Alert, ButtonLink, EmptyState, ErrorState, LoadingState, PageHeader, Panel, TableWrap } from '@/components';
import { useCurrentUser, usePermissions } from '@/features/auth';
import { useCreateUser, useUsers } from '../hooks/useAccounts';
import { type NewUserValues, toUserRequest } from '../types';
import { NewUserForm } from './NewUserForm';
import { UserRow } from './UserRow';

function UsersTable() {
  const users = useUsers();
  const me = useCurrentUser().data;
  const [deleted, setDeleted] = useState<string | null>(null);
  if (users.isPending) return <LoadingState />;
  if (users.isError) return <ErrorState error={users.error} onRetry={() => void users.refetch()} />;
  return (
    <>
      {deleted ? <Alert tone="success">{deleted} deleted.</Alert> : null}
      <TableWrap label="Users">
        <table className="table">
          <caption className="visually-hidden">People</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Role</th>
              <th scope="col">State</th>
              <th scope="col">Last sign-in</th>
              <ActionsHeader />
            </tr>
          </thead>
          <tbody>
            {users.data.map((user) => (
              <UserRow key={user.id} user={user} isYou={user.id === me?.id} onDeleted={setDeleted} />
            ))}
          </tbody>
        </table>
      </TableWrap>
    </>
  );
}

function UsersAdmin() {
  const create = useCreateUser();
  const [added, setAdded] = useState<string | null>(null);
  const onCreate = async (values: NewUserValues) => {
    setAdded(null);
    setAdded((await create.mutateAsync(toUserRequest(values))).username);
  };
  return (
    <div className="stack">
      <Panel title="People">
        <UsersTable />
      </Panel>
      <Panel title="Add a person">
        {added ? <Alert tone="success">{added} added: they can sign in now.</Alert> : null}
        <NewUserForm onSubmit={onCreate} />
      </Panel>
    </div>
  );
}

export function UsersPage() {
  const { role, canEdit } = usePermissions();
  return (
    <>
      <PageHeader
        title="Users"
        description="The people who sign in to the console, the API and the CLI, and what their role lets them do. The last active admin cannot be demoted, deactivated or deleted."
      />
      {role === undefined ? <LoadingState /> : null}
      {canEdit ? <UsersAdmin /> : null}
      {role !== undefined && !canEdit ? (
        <EmptyState title="Not allowed">
          <p>Only admins manage users. You can change your own password and manage your API tokens.</p>
          <ButtonLink to="/account" variant="primary">
            Go to your account
          </ButtonLink>
        </EmptyState>
      ) : null}
    </>
  );
}
