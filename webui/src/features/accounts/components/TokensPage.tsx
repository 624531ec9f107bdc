import { useState } from 'react';
import { ActionsHeader, EmptyState, ErrorState, LoadingState, PageHeader, Panel, TableWrap } from '@/components';
import { usePermissions } from '@/features/auth';
import { useCreateToken, useTokens } from '../hooks/useAccounts';
import { type ApiTokenCreated, type TokenValues, toTokenRequest } from '../types';
import { TokenForm } from './TokenForm';
import { TokenReveal } from './TokenReveal';
import { TokenRow } from './TokenRow';

function TokensTable({ showOwner }: { showOwner: boolean }) {
  const tokens = useTokens();
  if (tokens.isPending) return <LoadingState />;
  if (tokens.isError) return <ErrorState error={tokens.error} onRetry={() => void tokens.refetch()} />;
  if (tokens.data.length === 0) {
    return (
      <EmptyState title="No API tokens yet">
        <p>Create one below for a script or the CLI.</p>
      </EmptyState>
    );
  }
  return (
    <TableWrap label="API tokens">
      <table className="table">
        <caption className="visually-hidden">API tokens</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            {showOwner ? <th scope="col">Owner</th> : null}
            <th scope="col">Role</th>
            <th scope="col">State</th>
            <th scope="col">Created</th>
            <th scope="col">Expires</th>
            <th scope="col">Last used</th>
            <ActionsHeader />
          </tr>
        </thead>
        <tbody>
          {tokens.data.map((token) => (
            <TokenRow key={token.id} token={token} showOwner={showOwner} />
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}

export function TokensPage() {
  const { role, canEdit } = usePermissions();
  const create = useCreateToken();
  const [created, setCreated] = useState<ApiTokenCreated | null>(null);
  const onCreate = async (values: TokenValues) => {
    setCreated(null);
    setCreated(await create.mutateAsync(toTokenRequest(values)));
  };
  return (
    <>
      <PageHeader
        title="API tokens"
        description={
          canEdit
            ? 'Named secrets for scripts and the CLI. As an admin you see and can revoke everyone’s. A token acts with its role, never more than its owner’s.'
            : 'Named secrets for scripts and the CLI, acting as you with at most your role. Revoke a token you no longer need.'
        }
      />
      <div className="stack">
        <Panel title="Create an API token">
          {created ? <TokenReveal token={created} onDismiss={() => setCreated(null)} /> : null}
          {role === undefined ? <LoadingState /> : <TokenForm ownRole={role} onSubmit={onCreate} />}
        </Panel>
        <Panel title={canEdit ? 'Everyone’s tokens' : 'Your tokens'}>
          <TokensTable showOwner={canEdit} />
        </Panel>
      </div>
    </>
  );
}
