import { Badge } from '@/components';
import { formatDateTime } from '@/lib/format';
import { type Node, nodeNetworks, nodeSchedulers, schedulerDiffers } from '../types';

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
