import { Link } from 'react-router-dom';
import { Alert, ErrorState, LoadingState, PageHeader, Panel } from '@/components';
import { type Overview, type RevisionOverview, useOverview } from '@/features/telemetry';
import { formatDateTime } from '@/lib/format';
import { NodesSummary } from './NodesSummary';
import { ServiceTiles } from './ServiceTiles';

function revisionWords(revision: RevisionOverview | null): string {
  if (!revision) return 'nothing applied yet';
  if (revision.confirm_state === 'rolled-back') return `revision #${revision.number} was rolled back`;
  if (revision.confirm_state === 'rollback-failed') return `revision #${revision.number}: its rollback failed`;
  return `latest revision #${revision.number}${revision.live ? ', live' : ''}`;
}

/** What waits to be applied, and the live revision's confirmation if one is due. */
function ChangesSummary({ overview }: { overview: Overview }) {
  const { pending_changes: pending, revision } = overview;
  const awaiting = revision?.confirm_state === 'awaiting';
  return (
    <div className="stack">
      {awaiting ? (
        <Alert tone="warning" title={`Revision #${revision.number} waits for confirmation`}>
          <p>
            It rolls back by itself at {formatDateTime(revision.confirm_by, 'its deadline')} unless confirmed on the{' '}
            <Link to="/revisions">revisions page</Link>.
          </p>
        </Alert>
      ) : null}
      <p className="summary-line">
        {pending > 0 ? (
          <Link to="/revisions">
            {pending} pending {pending === 1 ? 'change' : 'changes'} to apply
          </Link>
        ) : (
          <span>No pending changes.</span>
        )}
        <span className="muted"> · {revisionWords(revision)}</span>
      </p>
    </div>
  );
}

export function DashboardPage() {
  const overview = useOverview();
  return (
    <>
      <PageHeader title="Dashboard" description="Virtual services and nodes as the agents last reported them, refreshed every 10 seconds." />
      {overview.isPending ? <LoadingState /> : null}
      {overview.isError && !overview.data ? <ErrorState error={overview.error} onRetry={() => void overview.refetch()} /> : null}
      {overview.data ? (
        <div className="stack">
          {overview.isError ? <Alert tone="warning">The figures could not be refreshed; showing the last ones read.</Alert> : null}
          <ChangesSummary overview={overview.data} />
          <Panel title="Virtual services">
            <ServiceTiles services={overview.data.services} />
          </Panel>
          <Panel title="Nodes">
            <NodesSummary nodes={overview.data.nodes} revision={overview.data.revision} />
          </Panel>
        </div>
      ) : null}
    </>
  );
}
