import { Badge, EmptyState, ErrorState, LoadingState, Panel, TableWrap } from '@/components';
import { formatDateTime } from '@/lib/format';
import { DAEMON_EVENTS_SHOWN } from '../api/nodesApi';
import { useDaemonEvents } from '../hooks/useNodes';
import type { DaemonEvent } from '../types';

function EventRow({ event }: { event: DaemonEvent }) {
  return (
    <tr>
      <td className="nowrap">
        <time dateTime={event.at}>{formatDateTime(event.at)}</time>
      </td>
      <th scope="row">{event.node}</th>
      <td>{event.daemon === 'haproxy' ? 'HAProxy' : event.daemon}</td>
      <td>{event.outcome === 'restarted' ? <Badge tone="warning">restarted</Badge> : <Badge tone="danger">could not restart</Badge>}</td>
      <td>{event.detail || <span className="muted">—</span>}</td>
    </tr>
  );
}

/** HAProxy or keepalived found stopped on a node (killed, crashed) and started again by its agent. */
export function DaemonEventsPanel() {
  const events = useDaemonEvents();
  const count = events.data?.count ?? 0;
  return (
    <Panel title="Daemon restarts">
      <p className="muted">Each node's agent starts HAProxy or keepalived again within a second when it stops between applies, and says so here.</p>
      {events.isPending ? <LoadingState /> : null}
      {events.isError ? <ErrorState error={events.error} onRetry={() => void events.refetch()} /> : null}
      {events.data && count === 0 ? (
        <EmptyState title="No restarts">
          <p>No daemon has stopped on any node.</p>
        </EmptyState>
      ) : null}
      {events.data && count > 0 ? (
        <>
          <TableWrap label="Daemon restarts">
            <table className="table table-compact">
              <caption className="visually-hidden">Daemon restarts, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col">Node</th>
                  <th scope="col">Daemon</th>
                  <th scope="col">Outcome</th>
                  <th scope="col">Detail</th>
                </tr>
              </thead>
              <tbody>
                {events.data.results.map((event) => (
                  <EventRow key={event.id} event={event} />
                ))}
              </tbody>
            </table>
          </TableWrap>
          {count > DAEMON_EVENTS_SHOWN ? <p className="muted">The newest {DAEMON_EVENTS_SHOWN} of {count}.</p> : null}
        </>
      ) : null}
    </Panel>
  );
}
