import { Badge, EmptyState, ErrorState, LoadingState } from '@/components';
import { formatDateTime } from '@/lib/format';
import { useHealthEvents } from '../hooks/useTelemetry';
import type { HealthEvent, MemberHealth } from '../types';
import { HealthStatusBadge } from './StatusBadges';

/** "L7STS: HTTP status 503": the check's word for what happened, then its detail (and the HTTP status if it does not say). */
export function describeCheck(result: Pick<MemberHealth, 'check' | 'detail' | 'code'>): string {
  const code = result.code !== null && !result.detail.includes(String(result.code)) ? ` (HTTP ${result.code})` : '';
  return [result.check, result.detail].filter(Boolean).join(': ') + code;
}

const latency = (ms: number | null) => (ms === null ? null : `${ms} ms`);

function NodeHealth({ row, showNode }: { row: MemberHealth; showNode: boolean }) {
  const failing = row.status === 'down';
  return (
    <div className="health">
      <div>
        {showNode ? <span className="node-name">{row.node_name}: </span> : null}
        <HealthStatusBadge status={row.status} />
        {row.stale ? (
          <>
            {' '}
            <Badge tone="warning">stale</Badge>
            <span className="visually-hidden"> (no recent report from {row.node_name})</span>
          </>
        ) : null}
      </div>
      {failing ? <div className="health-reason">{describeCheck(row)}</div> : null}
      <div className="cell-note">
        {[row.since ? `since ${formatDateTime(row.since)}` : null, latency(row.latency_ms) ? `check ${latency(row.latency_ms)}` : null].filter(Boolean).join(', ')}
      </div>
      {!failing && row.last_failure ? (
        <div className="cell-note">
          last failure: {row.last_failure} ({formatDateTime(row.last_failure_at, 'time unknown')})
        </div>
      ) : null}
    </div>
  );
}

/** A member's health on each node that checks it; the reason when it is down. */
export function MemberHealthSummary({ rows }: { rows: readonly MemberHealth[] }) {
  if (rows.length === 0) return <span className="cell-note">no report</span>;
  return (
    <>
      {rows.map((row) => (
        <NodeHealth key={row.node} row={row} showNode={rows.length > 1} />
      ))}
    </>
  );
}

function EventRow({ event }: { event: HealthEvent }) {
  return (
    <tr>
      <th scope="row" className="nowrap">{formatDateTime(event.at)}</th>
      <td>{event.node_name}</td>
      <td>
        {event.previous ? <HealthStatusBadge status={event.previous} /> : null}
        {event.previous ? ' → ' : null}
        <HealthStatusBadge status={event.status} />
      </td>
      <td>{describeCheck(event) || '–'}</td>
      <td>{latency(event.latency_ms) ?? '–'}</td>
    </tr>
  );
}

/** The member's recent health changes on every node, newest first (read while shown). */
export function HealthEventsTable({ memberId, memberName }: { memberId: number; memberName: string }) {
  const events = useHealthEvents(memberId, true);
  if (events.isPending) return <LoadingState label="Loading the health history…" />;
  if (events.isError) return <ErrorState error={events.error} onRetry={() => void events.refetch()} />;
  if (events.data.length === 0) {
    return (
      <EmptyState title="No health changes recorded">
        <p>{memberName} has not changed state since the nodes started checking it.</p>
      </EmptyState>
    );
  }
  return (
    <table className="table table-compact">
      <caption>Health history of {memberName}</caption>
      <thead>
        <tr>
          <th scope="col">When</th>
          <th scope="col">Node</th>
          <th scope="col">Change</th>
          <th scope="col">Reason</th>
          <th scope="col">Check time</th>
        </tr>
      </thead>
      <tbody>
        {events.data.map((event) => (
          <EventRow key={event.id} event={event} />
        ))}
      </tbody>
    </table>
  );
}
