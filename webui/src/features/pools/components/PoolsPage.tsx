import { memo } from 'react';
import { Link } from 'react-router-dom';
import { Button, ButtonLink, EmptyState, ErrorState, ListFilter, LoadingState, PageHeader, Pager, SortableHeader, TableWrap } from '@/components';
import { usePermissions } from '@/features/auth';
import type { ServerListSpec } from '@/lib/listView';
import { usePoolList } from '../hooks/usePools';
import { algorithmLabel, describeHealthCheck, type Pool } from '../types';

type PoolColumn = 'name' | 'algorithm' | 'members' | 'health';

/** Searched, sorted and paged by the API: a page of 100 whether there are ten pools or 20,000. */
const LIST_SPEC: ServerListSpec<PoolColumn> = {
  ordering: { name: ['name'], algorithm: ['algorithm'], members: ['members'], health: ['health_check'] },
  defaultSort: 'name',
  pageSize: 100,
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
  const { canEdit } = usePermissions();
  const list = usePoolList(LIST_SPEC);
  const { page: pools, rows, total, matching, searched } = list;
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
      {total === 0 ? (
        <EmptyState title="No pools yet">
          <p>A pool holds the servers that answer a virtual service.</p>
          {newPool ?? <p>An administrator can add them.</p>}
        </EmptyState>
      ) : null}
      {rows && total ? (
        <>
          <ListFilter
            label="Filter pools"
            hint="Name, description, algorithm, health check, member name or address; every word must match."
            value={list.query}
            onChange={list.setQuery}
            shown={searched ? matching : total}
            total={total}
            noun="pools"
          />
          {rows.length === 0 && searched ? (
            <EmptyState title={`No pool matches “${list.request.search}”`}>
              <Button onClick={() => list.setQuery('')}>Clear the filter</Button>
            </EmptyState>
          ) : (
            <>
              <TableWrap label="Pools">
                <table className="table" aria-busy={list.busy || undefined}>
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
                    {rows.map((pool) => (
                      <PoolRow key={pool.id} pool={pool} />
                    ))}
                  </tbody>
                </table>
              </TableWrap>
              <Pager offset={list.request.offset} count={matching} pageSize={LIST_SPEC.pageSize} onOffset={list.setOffset} label="Pool pages" />
            </>
          )}
        </>
      ) : null}
    </>
  );
}
