import { Alert, Badge, type BadgeTone, ConfirmButton, ErrorState, LoadingState, Panel, TableWrap } from '@/components';
import { formatQuantity } from '@/features/telemetry';
import { errorMessage } from '@/lib/api';
import { useReplication, useSwitchover } from '../hooks/useNodes';
import type { Replication, Standby } from '../types';

const STATES: Record<Replication['state'], { tone: BadgeTone; text: string }> = {
  synchronous: { tone: 'success', text: 'A standby confirms every commit: each applied change is on two appliances before it is acknowledged.' },
  'catching-up': { tone: 'warning', text: 'A standby is connected and catching up; commits do not wait for it yet.' },
  degraded: { tone: 'danger', text: 'A standby is away: commits are on this appliance only until it returns and catches up.' },
  single: { tone: 'neutral', text: 'One appliance: no standby holds a copy of the database.' },
  streaming: { tone: 'success', text: 'This appliance is a standby: it receives every change from the primary.' },
  disconnected: { tone: 'danger', text: 'This appliance is a standby and does not reach the primary.' },
};

function StandbyRow({ standby }: { standby: Standby }) {
  const confirms = standby.sync_state === 'sync' || standby.sync_state === 'quorum';
  return (
    <tr>
      <th scope="row">{standby.name}</th>
      <td className="mono">{standby.address ?? 'local'}</td>
      <td>{standby.state}</td>
      <td>{confirms ? <Badge tone="success">yes</Badge> : <Badge tone="warning">not yet</Badge>}</td>
      <td>{standby.lag_bytes === null ? 'unknown' : `${formatQuantity(standby.lag_bytes)}B`}</td>
      <td>{standby.silent_s === null ? 'never' : `${standby.silent_s.toFixed(1)} s ago`}</td>
    </tr>
  );
}

/**
 * An admin hands the management VIP and the writable database over to the synchronous
 * standby, on purpose (before maintenance of this appliance); it then follows that one.
 */
function SwitchoverButton({ standby }: { standby: string }) {
  const switchover = useSwitchover();
  return (
    <div className="runtime">
      <ConfirmButton
        size="small"
        subject={`the management VIP to ${standby}`}
        label={`Switch over to ${standby}`}
        confirmLabel="Yes, switch over"
        busy={switchover.isPending}
        onConfirm={() => switchover.mutate()}
      >
        Switch over
      </ConfirmButton>
      <span role="status" className="runtime-status">
        {switchover.data?.detail ?? ''}
      </span>
      {switchover.isError ? <Alert tone="error">{errorMessage(switchover.error)}</Alert> : null}
    </div>
  );
}

/**
 * The cluster database: this appliance's role, whether commits wait for a standby, and each
 * standby's lag; an admin can switch over to a standby that confirms commits.
 */
export function ReplicationPanel({ canSwitchOver = false }: { canSwitchOver?: boolean }) {
  const replication = useReplication();
  const data = replication.data;
  const state = data ? STATES[data.state] : null;
  const target = data?.role === 'primary' ? data.standbys.find((s) => s.state === 'streaming' && (s.sync_state === 'sync' || s.sync_state === 'quorum')) : undefined;
  return (
    <Panel title="Cluster database">
      {replication.isPending ? <LoadingState /> : null}
      {replication.isError ? <ErrorState error={replication.error} onRetry={() => void replication.refetch()} /> : null}
      {data && state ? (
        <>
          <p role="status">
            <Badge tone="info">{data.role}</Badge> <Badge tone={state.tone}>{data.state}</Badge> {state.text}
            {data.role === 'standby' && data.primary ? <> Primary: <span className="mono">{data.primary}</span>.</> : null}
          </p>
          {data.standbys.length ? (
            <TableWrap label="Standbys">
              <table className="table">
                <caption className="visually-hidden">Standbys</caption>
                <thead>
                  <tr>
                    <th scope="col">Standby</th>
                    <th scope="col">Address</th>
                    <th scope="col">State</th>
                    <th scope="col">Confirms commits</th>
                    <th scope="col">Lag</th>
                    <th scope="col">Last answer</th>
                  </tr>
                </thead>
                <tbody>
                  {data.standbys.map((standby) => (
                    <StandbyRow key={`${standby.name}-${standby.address ?? ''}`} standby={standby} />
                  ))}
                </tbody>
              </table>
            </TableWrap>
          ) : null}
          {data.state === 'degraded' ? <p className="muted">Waiting for: {data.slots.join(', ')}.</p> : null}
          {canSwitchOver && target ? <SwitchoverButton standby={target.name} /> : null}
        </>
      ) : null}
    </Panel>
  );
}
