import { ActionsHeader, Alert, Badge, Button, ConfirmButton, TableWrap, VrrpStateBadge } from '@/components';
import { errorMessage } from '@/lib/api';
import { useDeleteHaGroup } from '../hooks/useHa';
import { describePreempt, formatAdvert, type HaGroup, type HaNode, vrrpOf } from '../types';

type GroupActions = { onEdit: (group: HaGroup) => void; onMirror: (group: HaGroup) => void };

/** Besides the basics, what is set that changes how the group fails over. */
function groupNotes(group: HaGroup): string {
  return [
    group.vrrp_version === 2 ? 'VRRPv2' : null,
    group.authentication ? 'password' : null,
    group.track_haproxy === false ? 'HAProxy not tracked' : null,
    group.track_interfaces?.length ? `tracks ${group.track_interfaces.join(', ')}` : null,
    group.witness ? `witness ${group.witness}` : null,
  ]
    .filter(Boolean)
    .join(' · ');
}

/** Each node of the group by priority, with the state its agent last reported for the group. */
function GroupNodes({ group, nodes }: { group: HaGroup; nodes: readonly HaNode[] }) {
  const rows = [...group.nodes].sort((a, b) => b.priority - a.priority);
  return (
    <ul className="cell-list ha-nodes" aria-label={`Nodes of ${group.name}`}>
      {rows.map((row) => {
        const node = nodes.find((n) => n.id === row.node);
        const status = vrrpOf(node, group.name);
        return (
          <li key={row.node}>
            <span className="node-name">{node?.name ?? `#${row.node}`}</span> <span className="muted">{row.priority}</span>{' '}
            {status ? <VrrpStateBadge state={status.state} /> : <span className="cell-note">no report</span>}
            {node?.standby ? (
              <>
                {' '}
                <Badge tone="warning">standby</Badge>
              </>
            ) : null}
            {row.interface ? <span className="cell-note"> on {row.interface}</span> : null}
          </li>
        );
      })}
    </ul>
  );
}

/** Edit, mirror and delete: for admins only. */
function GroupActionsCell({ group, onEdit, onMirror }: { group: HaGroup } & GroupActions) {
  const remove = useDeleteHaGroup();
  return (
    <td className="cell-actions">
      <Button variant="ghost" size="small" onClick={() => onEdit(group)} aria-label={`Edit HA group ${group.name}`}>
        Edit
      </Button>
      <Button variant="ghost" size="small" onClick={() => onMirror(group)} aria-label={`Mirror HA group ${group.name}`}>
        Mirror
      </Button>
      <ConfirmButton size="small" subject={`HA group ${group.name}`} busy={remove.isPending} onConfirm={() => remove.mutate(group.id)}>
        Delete
      </ConfirmButton>
      {remove.isError ? <Alert tone="error">{errorMessage(remove.error)}</Alert> : null}
    </td>
  );
}

function GroupRow({ group, nodes, actions }: { group: HaGroup; nodes: readonly HaNode[]; actions: GroupActions | null }) {
  const notes = groupNotes(group);
  return (
    <tr>
      <th scope="row">
        {group.name}
        {notes ? <div className="cell-note">{notes}</div> : null}
      </th>
      <td className="mono">{group.vrid}</td>
      <td>
        <ul className="cell-list mono" aria-label={`VIPs of ${group.name}`}>
          {group.vips.map((vip) => (
            <li key={vip}>{vip}</li>
          ))}
        </ul>
        <div className="cell-note">on {group.interface ?? 'eth0'}</div>
      </td>
      <td className="nowrap">{formatAdvert(group.advert_interval_ms)}</td>
      <td>{describePreempt(group)}</td>
      <td>
        <GroupNodes group={group} nodes={nodes} />
      </td>
      {actions ? <GroupActionsCell group={group} {...actions} /> : null}
    </tr>
  );
}

/** The HA groups with each node's priority and current VRRP state; `actions` null leaves them read-only. */
export function HaGroupsTable({ groups, nodes, actions }: { groups: readonly HaGroup[]; nodes: readonly HaNode[]; actions: GroupActions | null }) {
  return (
    <TableWrap label="HA groups">
      <table className="table">
        <caption className="visually-hidden">HA groups</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">VRID</th>
            <th scope="col">VIPs</th>
            <th scope="col">Advert</th>
            <th scope="col">Preempt</th>
            <th scope="col">Nodes (priority, state)</th>
            {actions ? (
              <ActionsHeader />
            ) : null}
          </tr>
        </thead>
        <tbody>
          {groups.map((group) => (
            <GroupRow key={group.id} group={group} nodes={nodes} actions={actions} />
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}
