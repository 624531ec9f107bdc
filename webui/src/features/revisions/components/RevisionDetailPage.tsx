import { useQuery } from '@tanstack/react-query';
import { Link, useParams, useSearchParams } from 'react-router-dom';
import { EmptyState, ErrorState, LoadingState, PageHeader, Panel, SelectField } from '@/components';
import { usePermissions } from '@/features/auth';
import { formatDateTime } from '@/lib/format';
import { queryKeys } from '@/lib/queryKeys';
import { listRevisions } from '../api/revisionsApi';
import { useRevisionProgress } from '../hooks/useRevisions';
import type { Revision } from '../types';
import { ConfirmStateBadge } from './ConfirmStateBadge';
import { NodeResults } from './NodeResults';
import { RevisionDiffView } from './RevisionDiffView';
import { RollbackOfLink } from './RollbackOfLink';
import { RollbackPanel } from './RollbackPanel';

const CHOICES = 100;

/** Which earlier revision to compare with: the previous one unless `?from=` says otherwise. */
function FromSelector({ revision, from, onChange }: { revision: Revision; from?: number; onChange: (from?: number) => void }) {
  const choices = useQuery({ queryKey: [...queryKeys.revisions, 'choices'], queryFn: () => listRevisions(CHOICES, 0) });
  const earlier = (choices.data?.results ?? []).filter((r) => r.number < revision.number).map((r) => r.number);
  if (from !== undefined && !earlier.includes(from)) earlier.push(from);
  if (revision.number === 1) return null;
  const options = earlier.map((number) => ({ value: number, label: `Revision ${number}${number === revision.number - 1 ? ' (the previous one)' : ''}` }));
  return (
    <SelectField
      label="Compare with"
      className="field-narrow"
      placeholder="The previous revision"
      options={options}
      value={from ?? ''}
      onChange={(event) => onChange(event.target.value ? Number(event.target.value) : undefined)}
    />
  );
}

function Summary({ revision }: { revision: Revision }) {
  return (
    <Panel title="Summary">
      <div className="stack">
        <dl className="facts">
          <dt>Message</dt>
          <dd>{revision.message || <span className="muted">—</span>}</dd>
          <dt>By</dt>
          <dd>{revision.author ?? 'system'}</dd>
          <dt>When</dt>
          <dd>{formatDateTime(revision.created_at)}</dd>
          <dt>State</dt>
          <dd>
            {revision.live ? 'On every node' : 'Not on every node'} <ConfirmStateBadge state={revision.confirm_state} />
            {revision.confirm_problem ? <span className="message-failed"> {revision.confirm_problem}</span> : null}
          </dd>
          {revision.rollback_of !== null ? (
            <>
              <dt>Rollback</dt>
              <dd>
                <RollbackOfLink number={revision.rollback_of} />
              </dd>
            </>
          ) : null}
        </dl>
        {revision.nodes.length ? <NodeResults nodes={revision.nodes} revisionNumber={revision.number} /> : <p className="muted">No node runs it.</p>}
      </div>
    </Panel>
  );
}

/** One revision: who applied it and where it runs, what it changed (objects and files), and rollback. */
export function RevisionDetailPage() {
  const id = Number(useParams().id);
  const [search, setSearch] = useSearchParams();
  const fromParam = search.get('from');
  const from = fromParam && /^\d+$/.test(fromParam) ? Number(fromParam) : undefined;
  const { canOperate } = usePermissions();
  const revision = useRevisionProgress(Number.isInteger(id) && id > 0 ? id : undefined);
  const breadcrumb = <Link to="/revisions">Apply &amp; history</Link>;
  if (!Number.isInteger(id) || id <= 0) {
    return (
      <>
        <PageHeader title="Revision" breadcrumb={breadcrumb} />
        <EmptyState title="No such revision">
          <p>
            <Link to="/revisions">See the history</Link>.
          </p>
        </EmptyState>
      </>
    );
  }
  if (revision.isPending) return <LoadingState />;
  if (revision.isError) {
    return (
      <>
        <PageHeader title="Revision" breadcrumb={breadcrumb} />
        <ErrorState error={revision.error} onRetry={() => void revision.refetch()} />
      </>
    );
  }
  const data = revision.data;
  const choose = (next?: number) => setSearch(next === undefined ? {} : { from: String(next) }, { replace: true });
  return (
    <>
      <PageHeader title={`Revision ${data.number}`} breadcrumb={breadcrumb} description={data.message || undefined} />
      <div className="stack">
        <Summary revision={data} />
        <section className="stack" aria-labelledby="changes-title">
          <div className="section-header">
            <h2 id="changes-title">What it changed</h2>
            <FromSelector revision={data} from={from} onChange={choose} />
          </div>
          <RevisionDiffView id={data.id} from={from} />
        </section>
        {canOperate ? <RollbackPanel revision={data} /> : null}
      </div>
    </>
  );
}
