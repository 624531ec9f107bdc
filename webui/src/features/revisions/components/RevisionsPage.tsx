import { PageHeader } from '@/components';
import { usePermissions } from '@/features/auth';
import { ApplyPanel } from './ApplyPanel';
import { ConfirmPanel } from './ConfirmPanel';
import { PendingChanges } from './PendingChanges';
import { RevisionHistory } from './RevisionHistory';

export function RevisionsPage() {
  const { canOperate } = usePermissions();
  return (
    <>
      <PageHeader
        title="Apply & history"
        description="Edits to virtual services and pools are stored at once but reach the nodes only when applied as a revision."
      />
      <div className="stack">
        <ConfirmPanel />
        <PendingChanges />
        {canOperate ? <ApplyPanel /> : null}
        <RevisionHistory />
      </div>
    </>
  );
}
