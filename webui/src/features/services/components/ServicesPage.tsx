import { memo, useMemo } from 'react';
import { Link } from 'react-router-dom';
import { ActionsHeader, Alert, Badge, Button, ButtonLink, ConfirmButton, EmptyState, ErrorState, ListFilter, LoadingState, PageHeader, SortableHeader, TableWrap } from '@/components';
import { usePermissions } from '@/features/auth';
import { errorMessage } from '@/lib/api';
import { formatEndpoint } from '@/lib/format';
import { type ListViewSpec, useListView } from '@/lib/listView';
import { useDeleteService, useServices } from '../hooks/useServices';
import { forwardingLabel, type VirtualService } from '../types';
import { ServiceWarnings } from './ServiceWarnings';

/** A service with what the list shows and filters on beyond the API's fields. */
type ServiceListRow = { service: VirtualService; endpoint: string; poolName: string };
type ServiceColumn = 'name' | 'listener' | 'protocol' | 'pool' | 'state';

const LIST_SPEC: ListViewSpec<ServiceListRow, ServiceColumn> = {
  searchText: ({ service, endpoint, poolName }) => [
    service.name,
    service.description,
    endpoint,
    service.port,
    service.protocol,
    forwardingLabel(service.forwarding),
    poolName,
  ],
  sortValues: {
    name: (row) => row.service.name,
    listener: (row) => row.endpoint,
    protocol: (row) => row.service.protocol ?? '',
    pool: (row) => row.poolName,
    state: (row) => (row.service.enabled === false ? 1 : 0),
  },
  defaultSort: 'name',
};

/** Where a row's deletion stands: only the row being deleted gets one. */
type Deletion = { pending: boolean; error: unknown };

function ServiceActions({ service, deletion, onDelete }: { service: VirtualService; deletion?: Deletion; onDelete: (id: number) => void }) {
  return (
    <>
      <ButtonLink to={`/services/${service.id}/edit`} variant="ghost" size="small" aria-label={`Edit ${service.name}`}>
        Edit
      </ButtonLink>
      <ConfirmButton size="small" subject={`virtual service ${service.name}`} busy={deletion?.pending} onConfirm={() => onDelete(service.id)}>
        Delete
      </ConfirmButton>
      {deletion?.error ? <Alert tone="error">{errorMessage(deletion.error)}</Alert> : null}
    </>
  );
}

type ServiceRowProps = { row: ServiceListRow; canEdit: boolean; deletion?: Deletion; onDelete: (id: number) => void };

/**
 * One row; memoised, so a filter keystroke only touches the rows that come and go. One
 * delete mutation serves the whole list (a thousand rows, a thousand observers otherwise).
 */
const ServiceRow = memo(function ServiceRow({ row, canEdit, deletion, onDelete }: ServiceRowProps) {
  const { service } = row;
  return (
    <tr>
      <th scope="row">
        <Link to={`/services/${service.id}`}>{service.name}</Link>
        {service.description ? <div className="cell-note">{service.description}</div> : null}
        <ServiceWarnings service={service} compact />
      </th>
      <td className="mono">{row.endpoint}</td>
      <td>
        {service.protocol?.toUpperCase()}
        <div className="cell-note">{forwardingLabel(service.forwarding)}</div>
      </td>
      <td>
        <Link to={`/pools/${service.default_pool}`}>{row.poolName}</Link>
      </td>
      <td>{service.enabled === false ? <Badge tone="neutral">disabled</Badge> : <Badge tone="success">enabled</Badge>}</td>
      {canEdit ? (
        <td className="cell-actions">
          <ServiceActions service={service} deletion={deletion} onDelete={onDelete} />
        </td>
      ) : null}
    </tr>
  );
});

/** The services with what the list shows; each names its pool (the API's default_pool_name: no pools read). */
function useServiceRows(): { rows: ServiceListRow[] | undefined; services: ReturnType<typeof useServices> } {
  const services = useServices();
  const rows = useMemo(
    () =>
      services.data?.map((service) => ({
        service,
        endpoint: formatEndpoint(service.vip, service.port, service.port_end),
        poolName: service.default_pool_name,
      })),
    [services.data],
  );
  return { rows, services };
}

export function ServicesPage() {
  const { rows, services } = useServiceRows();
  const { canEdit } = usePermissions();
  const list = useListView(rows, LIST_SPEC);
  const remove = useDeleteService();
  const deletion: Deletion = { pending: remove.isPending, error: remove.error };
  const newService = canEdit ? <ButtonLink to="/services/new" variant="primary">New virtual service</ButtonLink> : null;
  return (
    <>
      <PageHeader
        title="Virtual services"
        description="The addresses and ports clients connect to, each served by a pool. Changes take effect when you apply them."
        actions={newService}
      />
      {services.isPending ? <LoadingState /> : null}
      {services.isError ? <ErrorState error={services.error} onRetry={() => void services.refetch()} /> : null}
      {rows?.length === 0 ? (
        <EmptyState title="No virtual services yet">
          <p>A virtual service listens on a VIP and port and hands connections to a pool.</p>
          {newService ?? <p>An administrator can add them.</p>}
        </EmptyState>
      ) : null}
      {rows?.length ? (
        <>
          <ListFilter
            label="Filter virtual services"
            hint="Name, VIP, port, protocol or pool; every word must match."
            value={list.query}
            onChange={list.setQuery}
            shown={list.visible.length}
            total={list.total}
            noun="virtual services"
          />
          {list.visible.length === 0 ? (
            <EmptyState title={`No virtual service matches “${list.query}”`}>
              <Button onClick={() => list.setQuery('')}>Clear the filter</Button>
            </EmptyState>
          ) : (
            <TableWrap label="Virtual services">
              <table className="table" aria-busy={list.stale || undefined}>
                <caption className="visually-hidden">Virtual services</caption>
                <thead>
                  <tr>
                    <SortableHeader column="name" label="Name" sort={list.sort} onSort={list.toggleSort} />
                    <SortableHeader column="listener" label="Listener" sort={list.sort} onSort={list.toggleSort} />
                    <SortableHeader column="protocol" label="Protocol" sort={list.sort} onSort={list.toggleSort} />
                    <SortableHeader column="pool" label="Pool" sort={list.sort} onSort={list.toggleSort} />
                    <SortableHeader column="state" label="State" sort={list.sort} onSort={list.toggleSort} />
                    {canEdit ? (
                      <ActionsHeader />
                    ) : null}
                  </tr>
                </thead>
                <tbody>
                  {list.visible.map((row) => (
                    <ServiceRow
                      key={row.service.id}
                      row={row}
                      canEdit={canEdit}
                      deletion={remove.variables === row.service.id ? deletion : undefined}
                      onDelete={remove.mutate}
                    />
                  ))}
                </tbody>
              </table>
            </TableWrap>
          )}
        </>
      ) : null}
    </>
  );
}
