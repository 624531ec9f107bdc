import { useState } from 'react';
import { Alert, Badge, Button, ConfirmButton } from '@/components';
import { errorMessage, fieldErrors } from '@/lib/api';
import { formatDateTime } from '@/lib/format';
import { useDeleteUser, useUpdateUser } from '../hooks/useAccounts';
import { ROLES, type Role, type User } from '../types';
import { PasswordResetForm } from './PasswordResetForm';

const COLUMNS = 5;

/** A refusal of a row action in a few words: the API names the field (role, is_active) or gives a detail. */
function refusal(error: unknown): string {
  const byField = Object.values(fieldErrors(error));
  return byField.length ? byField.join(' ') : errorMessage(error);
}

function RoleChanger({ user, onChange, busy }: { user: User; onChange: (role: Role) => void; busy: boolean }) {
  const [role, setRole] = useState<Role>(user.role);
  const id = `role-${user.id}`;
  return (
    <span className="role-changer">
      <label htmlFor={id} className="visually-hidden">
        Role of {user.username}
      </label>
      <select id={id} value={role} onChange={(event) => setRole(event.target.value as Role)}>
        {ROLES.map((option) => (
          <option key={option.value} value={option.value}>
            {option.value}
          </option>
        ))}
      </select>{' '}
      {role !== user.role ? (
        <Button size="small" busy={busy} onClick={() => onChange(role)} aria-label={`Change the role of ${user.username} to ${role}`}>
          Change role
        </Button>
      ) : null}
    </span>
  );
}

type UserRowProps = { user: User; isYou: boolean; onDeleted: (username: string) => void };

export function UserRow({ user, isYou, onDeleted }: UserRowProps) {
  const update = useUpdateUser(user.id);
  const remove = useDeleteUser();
  const [resetting, setResetting] = useState(false);
  const [done, setDone] = useState<string | null>(null);
  const change = (body: Parameters<typeof update.mutate>[0], message: string) => {
    setDone(null);
    update.mutate({ ...body, version: user.version }, { onSuccess: () => setDone(message) });
  };
  return (
    <>
      <tr>
        <th scope="row">
          {user.username} {isYou ? <Badge tone="info">you</Badge> : null}
        </th>
        <td className="nowrap">
          <RoleChanger key={`${user.role}-${user.version}`} user={user} busy={update.isPending} onChange={(role) => change({ role }, `${user.username} is now ${role}.`)} />
        </td>
        <td>{user.is_active ? <Badge tone="success">active</Badge> : <Badge tone="neutral">deactivated</Badge>}</td>
        <td className="nowrap">{formatDateTime(user.last_login)}</td>
        <td className="cell-actions">
          <Button size="small" variant="ghost" aria-expanded={resetting} onClick={() => setResetting((open) => !open)} aria-label={`Reset the password of ${user.username}`}>
            Reset password
          </Button>
          {isYou ? null : user.is_active ? (
            <ConfirmButton size="small" subject={user.username} confirmLabel="Yes, deactivate" busy={update.isPending} onConfirm={() => change({ is_active: false }, `${user.username} can no longer sign in.`)}>
              Deactivate
            </ConfirmButton>
          ) : (
            <Button size="small" busy={update.isPending} onClick={() => change({ is_active: true }, `${user.username} can sign in again.`)} aria-label={`Activate ${user.username}`}>
              Activate
            </Button>
          )}
          {isYou ? null : (
            <ConfirmButton size="small" subject={user.username} busy={remove.isPending} onConfirm={() => remove.mutate(user.id, { onSuccess: () => onDeleted(user.username) })}>
              Delete
            </ConfirmButton>
          )}
          {update.isError ? (
            <Alert tone="error" title="Not changed">
              {refusal(update.error)}
            </Alert>
          ) : null}
          {remove.isError ? (
            <Alert tone="error" title="Not deleted">
              {errorMessage(remove.error)}
            </Alert>
          ) : null}
          {done ? <Alert tone="success">{done}</Alert> : null}
        </td>
      </tr>
      {resetting ? (
        <tr>
          <td colSpan={COLUMNS}>
            <PasswordResetForm
              username={user.username}
              onCancel={() => setResetting(false)}
              onSubmit={async ({ password }) => {
                setDone(null);
                await update.mutateAsync({ password, version: user.version });
                setResetting(false);
                setDone(`New password set for ${user.username}.`);
              }}
            />
          </td>
        </tr>
      ) : null}
    </>
  );
}
