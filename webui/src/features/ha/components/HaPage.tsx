import { useState } from 'react';
import { Alert, Button, EmptyState, ErrorState, LoadingState, PageHeader, Panel } from '@/components';
import { usePermissions } from '@/features/auth';
import { useHaGroups, useHaNodes } from '../hooks/useHa';
import { type HaGroupEditing, HaGroupEditor } from './HaGroupEditor';
import { HaGroupsTable } from './HaGroupsTable';
import { HaTimeline } from './HaTimeline';

export function HaPage() {
  const { canEdit } = usePermissions();
  const groups = useHaGroups();
  const nodes = useHaNodes();
  const [editing, setEditing] = useState<HaGroupEditing | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const open = (next: HaGroupEditing) => {
    setSaved(null);
    setEditing(next);
  };
  const failed = groups.isError ? groups : nodes.isError ? nodes : null;
  const ready = groups.data && nodes.data;
  return (
    <>
      <PageHeader
        title="High availability"
        description="HA groups are VRRP instances: VIPs that move together to another node when their master fails. Active/backup is one group; active/active is two or more with mirrored priorities and the VIPs split between them. Changes reach the nodes when applied."
        actions={
          canEdit ? (
            <Button variant="primary" onClick={() => open({ mode: 'new' })} disabled={!ready}>
              New HA group
            </Button>
          ) : null
        }
      />
      <div className="stack">
        <Panel title="HA groups">
          {saved ? <Alert tone="success">HA group {saved} saved; apply to put it on the nodes.</Alert> : null}
          {groups.isPending || nodes.isPending ? <LoadingState /> : null}
          {failed ? <ErrorState error={failed.error} onRetry={() => void failed.refetch()} /> : null}
          {ready && groups.data.length === 0 ? (
            <EmptyState title="No HA groups yet">
              <p>
                Without one, no VIP moves: a node that fails takes its services with it.{' '}
                {canEdit ? 'Create one with New HA group.' : 'An admin creates them.'}
              </p>
            </EmptyState>
          ) : null}
          {ready && groups.data.length ? (
            <HaGroupsTable
              groups={groups.data}
              nodes={nodes.data}
              actions={canEdit ? { onEdit: (group) => open({ mode: 'edit', group }), onMirror: (group) => open({ mode: 'mirror', group }) } : null}
            />
          ) : null}
        </Panel>
        {editing && ready && canEdit ? (
          <HaGroupEditor
            editing={editing}
            groups={groups.data}
            nodes={nodes.data}
            onSaved={(name) => {
              setEditing(null);
              setSaved(name);
            }}
            onCancel={() => setEditing(null)}
          />
        ) : null}
        <HaTimeline nodeNames={nodes.data?.map((n) => n.name) ?? []} groupNames={groups.data?.map((g) => g.name) ?? []} />
      </div>
    </>
  );
}
