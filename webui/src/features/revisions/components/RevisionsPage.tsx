import { PageHeader } from '@/components';
import { ApplyPanel } from './ApplyPanel';
import { RevisionHistory } from './RevisionHistory';

export function RevisionsPage() {
  return (
    <>
      <PageHeader
        title="Apply & history"
        description="Edits to virtual services and pools are stored at once but reach the nodes only when applied as a revision."
      />
      <div className="stack">
        <ApplyPanel />
        <RevisionHistory />
      </div>
    </>
  );
}
