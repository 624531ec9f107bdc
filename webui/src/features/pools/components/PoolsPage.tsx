import { memo } from 'react';
import { Link } from 'react-router-dom';
import { Button, ButtonLink, EmptyState, ErrorState, ListFilter, LoadingState, PageHeader, SortableHeader, TableWrap } from '@/components';
import { usePermissions } from '@/features/auth';
import { type ListViewSpec, useListView } from '@/lib/listView';
import { usePools } from '../hooks/usePools';
import { algorithmLabel, describeHealthCheck, type Pool } from '../types';

type PoolColumn = 'name' | 'algorithm' | 'members' | 'health';

const LIST_SPEC: ListViewSpec<Pool, PoolColumn> = {
  searchText: (pool) => [
    pool.name,
    pool.description,
    algorithmLabel(pool.algorithm),
    describeHealthCheck(pool.health_check),
    ...pool.members.flatMap((member) => [member.name, `${member.address}:${member.port}`]),
  ],
  sortValues: {
    name: (pool) => pool.name,
    algorithm: (pool) => algorithmLabel(pool.algorithm),
    members: (pool) => pool.members.length,
    health: (pool) => describeHealthCheck(pool.health_check),
  },
  defaultSort: 'name',
};

function memberSummary(pool: Pool): string {
  const total = pool.members.length;
  if (total === 0) return 'none';
  const enabled = pool.members.filter((m) => (m.state ?? 'enabled') === 'enabled').length;
  return enabled === total ? `${total}` : `${total} (${enabled} enabled)`;
}

const PoolRow = memo(function PoolRow({ pool }: { pool: Pool }) {
  return (
    <tr>
      <th scope="row">
        <Link to={`/pools/${pool.id}`}>{pool.name}</Link>
        {pool.description ? <div className="cell-note">{pool.description}</div> : null}
      </th>
      <td>{algorithmLabel(pool.algorithm)}</td>
      <td>{memberSummary(pool)}</td>
      <td>{describeHealthCheck(pool.health_check)}</td>
    </tr>
  );
});

export function PoolsPage() {
  const pools = usePools();
  const { canEdit } = usePermissions();
  const list = useListView(pools.data, LIST_SPEC);
  const newPool = canEdit ? <ButtonLink to="/pools/new" variant="primary">New pool</ButtonLink> : null;
  return (
    <>
      <PageHeader
        title="Pools"
        description="Groups of real servers, with the algorithm that spreads connections and the health check that takes failed servers out."
        actions={newPool}
      />
      {pools.isPending ? <LoadingState /> : null}
      {pools.isError ? <ErrorState error={pools.error} onRetry={() => void pools.refetch()} /> : null}
      {pools.data?.length === 0 ? (
        <EmptyState title="No pools yet">
          <p>A pool holds the servers that answer a virtual service.</p>
          {newPool ?? <p>An administrator can add them.</p>}
        </EmptyState>
      ) : null}
      {pools.data?.length ? (
        <>
          <ListFilter
            label="Filter pools"
            hint="Name, algorithm, health check, member name or address; every word must match."
            value={list.query}
            onChange={list.setQuery}
            shown={list.visible.length}
            total={list.total}
            noun="pools"
          />
          {list.visible.length === 0 ? (
            <EmptyState title={`No pool matches “${list.query}”`}>
              <Button onClick={() => list.setQuery('')}>Clear the filter</Button>
            </EmptyState>
          ) : (
            <TableWrap label="Pools">
              <table className="table" aria-busy={list.stale || undefined}>
                <caption className="visually-hidden">Pools</caption>
                <thead>
                  <tr>
                    <SortableHeader column="name" label="Name" sort={list.sort} onSort={list.toggleSort} />
                    <SortableHeader column="algorithm" label="Algorithm" sort={list.sort} onSort={list.toggleSort} />
                    <SortableHeader column="members" label="Members" sort={list.sort} onSort={list.toggleSort} />
                    <SortableHeader column="health" label="Health check" sort={list.sort} onSort={list.toggleSort} />
                  </tr>
                </thead>
                <tbody>
                  {list.visible.map((pool) => (
                    <PoolRow key={pool.id} pool={pool} />
                  ))}
                </tbody>
              </table>
            </TableWrap>
          )}
        </>
      ) : null}
    </>
  );
}
