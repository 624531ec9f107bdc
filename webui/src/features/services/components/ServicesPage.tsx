import { memo } from 'react';
import { Link } from 'react-router-dom';
import { ActionsHeader, Alert, Badge, Button, ButtonLink, ConfirmButton, EmptyState, ErrorState, ListFilter, LoadingState, PageHeader, Pager, SortableHeader, TableWrap } from '@/components';
import { usePermissions } from '@/features/auth';
import { errorMessage } from '@/lib/api';
import { formatEndpoint } from '@/lib/format';
import type { ServerListSpec } from '@/lib/listView';
import { useDeleteService, useServiceList } from '../hooks/useServices';
import { forwardingLabel, type VirtualService } from '../types';
import { ServiceWarnings } from './ServiceWarnings';

type ServiceColumn = 'name' | 'listener' | 'protocol' | 'pool' | 'state';

/** Searched, sorted and paged by the API: a page of 100 whether there are ten services or 10,000. */
const LIST_SPEC: ServerListSpec<ServiceColumn> = {
  ordering: {
    name: ['name'],
    listener: ['vip', 'port'], // addresses as addresses: 10.0.0.9 before 10.0.0.10
    protocol: ['protocol'],
    pool: ['default_pool_name'],
    state: ['-enabled'], // enabled ones first
  },
  defaultSort: 'name',
  pageSize: 100,
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

type ServiceRowProps = { service: VirtualService; canEdit: boolean; deletion?: Deletion; onDelete: (id: number) => void };

/**
 * One row; memoised, so a new page only touches the rows that come and go. One delete
 * mutation serves the whole page (a hundred rows, a hundred observers otherwise).
 */
const ServiceRow = memo(function ServiceRow({ service, canEdit, deletion, onDelete }: ServiceRowProps) {
  return (
    <tr>
      <th scope="row">
        <Link to={`/services/${service.id}`}>{service.name}</Link>
        {service.description ? <div className="cell-note">{service.description}</div> : null}
        <ServiceWarnings service={service} compact />
      </th>
      <td className="mono">{formatEndpoint(service.vip, service.port, service.port_end)}</td>
      <td>
        {service.protocol?.toUpperCase()}
        <div className="cell-note">{forwardingLabel(service.forwarding)}</div>
      </td>
      <td>
        <Link to={`/pools/${service.default_pool}`}>{service.default_pool_name}</Link>
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

export function ServicesPage() {
  const { canEdit } = usePermissions();
  const list = useServiceList(LIST_SPEC);
  const { page: services, rows, total, matching, searched } = list;
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
      {total === 0 ? (
        <EmptyState title="No virtual services yet">
          <p>A virtual service listens on a VIP and port and hands connections to a pool.</p>
          {newService ?? <p>An administrator can add them.</p>}
        </EmptyState>
      ) : null}
      {rows && total ? (
        <>
          <ListFilter
            label="Filter virtual services"
            hint="Name, description, VIP, port, protocol, forwarding or pool; every word must match."
            value={list.query}
            onChange={list.setQuery}
            shown={searched ? matching : total}
            total={total}
            noun="virtual services"
          />
          {rows.length === 0 && searched ? (
            <EmptyState title={`No virtual service matches “${list.request.search}”`}>
              <Button onClick={() => list.setQuery('')}>Clear the filter</Button>
            </EmptyState>
          ) : (
            <>
              <TableWrap label="Virtual services">
                <table className="table" aria-busy={list.busy || undefined}>
                  <caption className="visually-hidden">Virtual services</caption>
                  <thead>
                    <tr>
                      <SortableHeader column="name" label="Name" sort={list.sort} onSort={list.toggleSort} />
                      <SortableHeader column="listener" label="Listener" sort={list.sort} onSort={list.toggleSort} />
                      <SortableHeader column="protocol" label="Protocol" sort={list.sort} onSort={list.toggleSort} />
                      <SortableHeader column="pool" label="Pool" sort={list.sort} onSort={list.toggleSort} />
                      <SortableHeader column="state" label="State" sort={list.sort} onSort={list.toggleSort} />
                      {canEdit ? <ActionsHeader /> : null}
                    </tr>
                  </thead>
                  <tbody>
                    {rows.map((service) => (
                      <ServiceRow
                        key={service.id}
                        service={service}
                        canEdit={canEdit}
                        deletion={remove.variables === service.id ? deletion : undefined}
                        onDelete={remove.mutate}
                      />
                    ))}
                  </tbody>
                </table>
              </TableWrap>
              <Pager offset={list.request.offset} count={matching} pageSize={LIST_SPEC.pageSize} onOffset={list.setOffset} label="Virtual service pages" />
            </>
          )}
        </>
      ) : null}
    </>
  );
}
