import { Panel } from '@/components';
import { useSaveHaGroup } from '../hooks/useHa';
import {
  emptyHaGroupForm,
  type HaGroup,
  type HaGroupFormValues,
  type HaNode,
  mirrorHaGroupForm,
  nextFreeVrid,
  toHaGroupForm,
  toHaGroupRequest,
} from '../types';
import { HaGroupForm } from './HaGroupForm';

/** What the editor is for: a new group, a stored one, or the mirror of a stored one (active/active). */
export type HaGroupEditing = { mode: 'new' } | { mode: 'edit'; group: HaGroup } | { mode: 'mirror'; group: HaGroup };

type EditorProps = { editing: HaGroupEditing; groups: readonly HaGroup[]; nodes: readonly HaNode[]; onSaved: (name: string) => void; onCancel: () => void };

function editorTitle(editing: HaGroupEditing): string {
  if (editing.mode === 'edit') return `Edit HA group ${editing.group.name}`;
  if (editing.mode === 'mirror') return `Mirror of ${editing.group.name}`;
  return 'New HA group';
}

function defaultValues(editing: HaGroupEditing, groups: readonly HaGroup[]): HaGroupFormValues {
  if (editing.mode === 'edit') return toHaGroupForm(editing.group);
  if (editing.mode === 'mirror') return mirrorHaGroupForm(editing.group, groups);
  // 51 is where keepalived's examples start; anything free on the segment will do.
  return { ...emptyHaGroupForm(), vrid: nextFreeVrid(50, groups) };
}

export function HaGroupEditor({ editing, groups, nodes, onSaved, onCancel }: EditorProps) {
  const stored = editing.mode === 'edit' ? editing.group : undefined;
  const save = useSaveHaGroup(stored?.id);
  const onSubmit = async (values: HaGroupFormValues) => {
    await save.mutateAsync(toHaGroupRequest(values));
    onSaved(values.name);
  };
  return (
    <Panel title={editorTitle(editing)}>
      {editing.mode === 'mirror' ? (
        <p className="muted">
          Active/active: the same nodes and settings with the priorities reversed, so another node is master of this group. Give it the VIPs it
          should carry; a VIP belongs to one group only, so take them out of {editing.group.name} first, or use new ones.
        </p>
      ) : null}
      <HaGroupForm
        key={editing.mode === 'new' ? 'new' : `${editing.mode}-${editing.group.id}`}
        defaultValues={defaultValues(editing, groups)}
        nodes={nodes}
        hasPassword={stored?.authentication ?? false}
        submitLabel={stored ? 'Save HA group' : 'Create HA group'}
        onSubmit={onSubmit}
        onCancel={onCancel}
      />
    </Panel>
  );
}
