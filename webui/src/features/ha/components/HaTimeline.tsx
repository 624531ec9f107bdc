import { useState } from 'react';
import { EmptyState, ErrorState, LoadingState, Panel, SelectField, TableWrap, VrrpStateBadge } from '@/components';
import { formatDateTime } from '@/lib/format';
import { HA_EVENTS_SHOWN } from '../api/haApi';
import { EVENTS_REFRESH_MS, useHaEvents } from '../hooks/useHa';
import type { HaEvent, HaEventFilters } from '../types';

const asOptions = (names: readonly string[]) => names.map((name) => ({ value: name, label: name }));

function EventRow({ event }: { event: HaEvent }) {
  return (
    <tr>
      <td className="nowrap">
        <time dateTime={event.at}>{formatDateTime(event.at)}</time>
      </td>
      <th scope="row">{event.node}</th>
      <td>{event.group}</td>
      <td className="nowrap">
        <VrrpStateBadge state={event.old_state} /> → <VrrpStateBadge state={event.new_state} />
      </td>
      <td className="mono">{event.priority}</td>
      <td>{event.reason || <span className="muted">—</span>}</td>
    </tr>
  );
}

type TimelineProps = { nodeNames: readonly string[]; groupNames: readonly string[] };

/** The VRRP role changes the nodes' agents reported, newest first, followed live. */
export function HaTimeline({ nodeNames, groupNames }: TimelineProps) {
  const [filters, setFilters] = useState<HaEventFilters>({ node: '', group: '' });
  const events = useHaEvents(filters);
  const filter = (key: keyof HaEventFilters) => (event: { target: { value: string } }) => setFilters((f) => ({ ...f, [key]: event.target.value }));
  const count = events.data?.count ?? 0;
  return (
    <Panel title="Role changes">
      <p className="muted">
        Every VRRP state change on a node, as its agent saw it: newest first, refreshed every {EVENTS_REFRESH_MS / 1000} s.
      </p>
      <div className="form-row filters">
        <SelectField label="Node" placeholder="All nodes" options={asOptions(nodeNames)} value={filters.node} onChange={filter('node')} />
        <SelectField label="Group" placeholder="All groups" options={asOptions(groupNames)} value={filters.group} onChange={filter('group')} />
      </div>
      {events.isPending ? <LoadingState /> : null}
      {events.isError ? <ErrorState error={events.error} onRetry={() => void events.refetch()} /> : null}
      {events.data && count === 0 ? (
        <EmptyState title="No role changes">
          <p>{filters.node || filters.group ? 'None for this node and group.' : 'The nodes report here whenever a group changes master.'}</p>
        </EmptyState>
      ) : null}
      {events.data && count > 0 ? (
        <>
          <TableWrap label="Role changes">
            <table className="table table-compact">
              <caption className="visually-hidden">Role changes, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col">Node</th>
                  <th scope="col">Group</th>
                  <th scope="col">Change</th>
                  <th scope="col">Priority</th>
                  <th scope="col">Reason</th>
                </tr>
              </thead>
              <tbody>
                {events.data.results.map((event) => (
                  <EventRow key={event.id} event={event} />
                ))}
              </tbody>
            </table>
          </TableWrap>
          {count > HA_EVENTS_SHOWN ? <p className="muted">The newest {HA_EVENTS_SHOWN} of {count}.</p> : null}
        </>
      ) : null}
    </Panel>
  );
}
