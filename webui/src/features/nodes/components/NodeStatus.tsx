import { Badge, VrrpStateBadge } from '@/components';
import { formatDateTime } from '@/lib/format';
import { configSync, type NewestRevision, type Node, nodeNetworks, nodeSchedulers, nodeVrrp, schedulerDiffers } from '../types';

/** The node's networks, as its agent last reported them. */
export function NodeNetworks({ node }: { node: Node }) {
  const networks = nodeNetworks(node);
  if (!node.status_at) return <span className="muted">not reported</span>;
  return (
    <>
      {networks.length ? (
        <ul className="cell-list mono" aria-label={`Networks of ${node.name}`}>
          {networks.map((network) => (
            <li key={network}>{network}</li>
          ))}
        </ul>
      ) : (
        <span className="muted">none</span>
      )}
      <div className="cell-note">reported {formatDateTime(node.status_at)}</div>
    </>
  );
}

/** Per IPVS service, the scheduler wanted and the one in force; a difference is flagged with why. */
export function NodeSchedulers({ node }: { node: Node }) {
  const schedulers = nodeSchedulers(node);
  if (schedulers.length === 0) return <span className="muted">none</span>;
  return (
    <ul className="cell-list" aria-label={`IPVS schedulers on ${node.name}`}>
      {schedulers.map((status) => {
        const service = status.name || status.key;
        return schedulerDiffers(status) ? (
          <li key={status.key} className="scheduler-mismatch">
            <Badge tone="warning">differs</Badge> {service}: wants <code>{status.scheduler_wanted}</code>, runs{' '}
            <code>{status.scheduler_in_force || 'none'}</code>
            {status.message ? <div className="cell-note">{status.message}</div> : null}
          </li>
        ) : (
          <li key={status.key}>
            {service}: <code>{status.scheduler_in_force}</code>
          </li>
        );
      })}
    </ul>
  );
}

/** The node's state in each HA group it is in, with its priority, as its agent last reported it. */
export function NodeVrrp({ node }: { node: Node }) {
  const groups = nodeVrrp(node);
  if (groups.length === 0 && !node.management) return <span className="muted">{node.status_at ? 'in no HA group' : 'not reported'}</span>;
  return (
    <ul className="cell-list ha-nodes" aria-label={`VRRP states of ${node.name}`}>
      {node.management ? (
        <li>
          <span className="nowrap">
            <span className="node-name">management VIP</span> <VrrpStateBadge state={node.management} />
          </span>
          {node.management === 'master' ? <div className="cell-note">holds it: the cluster database takes changes here</div> : null}
        </li>
      ) : null}
      {groups.map((status) => (
        <li key={status.group}>
          <span className="nowrap">
            <span className="node-name">{status.group}</span> <VrrpStateBadge state={status.state} /> <span className="muted">{status.priority}</span>
          </span>
          {status.since ? <div className="cell-note">since {formatDateTime(status.since)}</div> : null}
        </li>
      ))}
    </ul>
  );
}

/** The revision the node runs against the newest one: configuration sync at a glance. */
export function NodeRevision({ node, newest }: { node: Node; newest: NewestRevision | null | undefined }) {
  const runs = node.applied_revision ? <span className="mono">#{node.applied_revision}</span> : <span className="muted">none</span>;
  const sync = configSync(node, newest);
  return (
    <>
      {runs}{' '}
      {sync === 'current' ? <Badge tone="success">newest</Badge> : null}
      {sync === 'behind' && newest ? (
        <>
          <Badge tone="warning">behind</Badge>
          <div className="cell-note">newest #{newest.number}</div>
        </>
      ) : null}
    </>
  );
}
