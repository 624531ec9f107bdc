import { Alert, EmptyState, ErrorState, LoadingState, Panel } from '@/components';
import { objectsOf, useRevisionDiff } from '../hooks/useRevisions';
import type { FileChange } from '../types';
import { ChangeBadge, describeSummary, ObjectChanges, ShowMore } from './ObjectChanges';
import { UnifiedDiff } from './UnifiedDiff';

function byNode(files: readonly FileChange[]): [string, FileChange[]][] {
  const groups = new Map<string, FileChange[]>();
  for (const file of files) groups.set(file.node, [...(groups.get(file.node) ?? []), file]);
  return [...groups];
}

function FileChanges({ files }: { files: readonly FileChange[] }) {
  if (files.length === 0) return <EmptyState title="No rendered file changed" />;
  return (
    <div className="stack">
      {byNode(files).map(([node, changes]) => (
        <section key={node} aria-labelledby={`files-${node}`} className="node-files">
          <h4 id={`files-${node}`}>Node {node}</h4>
          {changes.map((change) => (
            <details key={change.file} open className="file-change">
              <summary>
                <span className="mono">{change.file}</span> <ChangeBadge change={change.change} />
              </summary>
              <UnifiedDiff diff={change.diff} label={`${change.file} on ${node}`} />
            </details>
          ))}
        </section>
      ))}
    </div>
  );
}

/** What revision `id` changed since revision number `from` (default: the one before): objects, then each node's files. */
export function RevisionDiffView({ id, from }: { id: number; from?: number }) {
  const diff = useRevisionDiff(id, from);
  if (diff.isPending) return <LoadingState label="Comparing…" />;
  if (diff.isError) return <ErrorState error={diff.error} onRetry={() => void diff.refetch()} />;
  const first = diff.data.pages[0];
  if (!first) return <LoadingState label="Comparing…" />;
  const { from_revision: fromRevision, to_revision: toRevision, count, summary, files, problems } = first;
  const objects = objectsOf(diff.data.pages);
  const compared = fromRevision === null ? 'the empty configuration (it is the first revision)' : `revision ${fromRevision}`;
  return (
    <>
      <p className="muted" role="status">
        Revision {toRevision} compared with {compared}: {count} object{count === 1 ? '' : 's'}
        {count ? ` (${describeSummary(summary)})` : ''} and {files.length} file{files.length === 1 ? '' : 's'} changed.
      </p>
      {problems.length ? (
        <Alert tone="warning" title="Some nodes' files could not be compared">
          <ul>
            {problems.map((problem) => (
              <li key={problem}>{problem}</li>
            ))}
          </ul>
        </Alert>
      ) : null}
      <Panel title="Objects" headingLevel={3}>
        {objects.length ? <ObjectChanges objects={objects} /> : <EmptyState title="No object changed" />}
        <ShowMore shown={objects.length} count={count} busy={diff.isFetchingNextPage} onMore={() => void diff.fetchNextPage()} />
      </Panel>
      <Panel title="Rendered files" headingLevel={3}>
        <FileChanges files={files} />
      </Panel>
    </>
  );
}
