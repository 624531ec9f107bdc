import { Link } from 'react-router-dom';
import { ButtonLink, EmptyState, ErrorState, LoadingState, PageHeader } from '@/components';
import { usePools } from '../hooks/usePools';
import { algorithmLabel, describeHealthCheck, type Pool } from '../types';

function memberSummary(pool: Pool): string {
  const total = pool.members.length;
  if (total === 0) return 'none';
  const enabled = pool.members.filter((m) => (m.state ?? 'enabled') === 'enabled').length;
  return enabled === total ? `${total}` : `${total} (${enabled} enabled)`;
}

export function PoolsPage() {
  const pools = usePools();
  return (
    <>
      <PageHeader
        title="Pools"
        description="Groups of real servers, with the algorithm that spreads connections and the health check that takes failed servers out."
        actions={<ButtonLink to="/pools/new" variant="primary">New pool</ButtonLink>}
      />
      {pools.isPending ? <LoadingState /> : null}
      {pools.isError ? <ErrorState error={pools.error} onRetry={() => void pools.refetch()} /> : null}
      {pools.data?.length === 0 ? (
        <EmptyState title="No pools yet">
          <p>A pool holds the servers that answer a virtual service.</p>
          <ButtonLink to="/pools/new" variant="primary">New pool</ButtonLink>
        </EmptyState>
      ) : null}
      {pools.data?.length ? (
        <div className="table-wrap">
          <table className="table">
            <caption className="visually-hidden">Pools</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Algorithm</th>
                <th scope="col">Members</th>
                <th scope="col">Health check</th>
              </tr>
            </thead>
            <tbody>
              {pools.data.map((pool) => (
                <tr key={pool.id}>
                  <th scope="row">
                    <Link to={`/pools/${pool.id}`}>{pool.name}</Link>
                    {pool.description ? <div className="cell-note">{pool.description}</div> : null}
                  </th>
                  <td>{algorithmLabel(pool.algorithm)}</td>
                  <td>{memberSummary(pool)}</td>
                  <td>{describeHealthCheck(pool.health_check)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </>
  );
}
