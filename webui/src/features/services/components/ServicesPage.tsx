import { Link } from 'react-router-dom';
import { Alert, Badge, ButtonLink, ConfirmButton, EmptyState, ErrorState, LoadingState, PageHeader } from '@/components';
import { errorMessage } from '@/lib/api';
import { formatEndpoint } from '@/lib/format';
import { useDeleteService, usePoolChoices, useServices } from '../hooks/useServices';
import { forwardingLabel, type PoolChoice, type VirtualService } from '../types';
import { ServiceWarnings } from './ServiceWarnings';

function poolName(pools: readonly PoolChoice[] | undefined, id: number): string {
  return pools?.find((pool) => pool.id === id)?.name ?? `#${id}`;
}

function ServiceRow({ service, pools }: { service: VirtualService; pools?: readonly PoolChoice[] }) {
  const remove = useDeleteService();
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
        <Link to={`/pools/${service.default_pool}`}>{poolName(pools, service.default_pool)}</Link>
      </td>
      <td>{service.enabled === false ? <Badge tone="neutral">disabled</Badge> : <Badge tone="success">enabled</Badge>}</td>
      <td className="cell-actions">
        <ButtonLink to={`/services/${service.id}`} variant="ghost" size="small" aria-label={`Edit ${service.name}`}>
          Edit
        </ButtonLink>
        <ConfirmButton size="small" subject={`virtual service ${service.name}`} busy={remove.isPending} onConfirm={() => remove.mutate(service.id)}>
          Delete
        </ConfirmButton>
        {remove.isError ? <Alert tone="error">{errorMessage(remove.error)}</Alert> : null}
      </td>
    </tr>
  );
}

export function ServicesPage() {
  const services = useServices();
  const pools = usePoolChoices();
  return (
    <>
      <PageHeader
        title="Virtual services"
        description="The addresses and ports clients connect to, each served by a pool. Changes take effect when you apply them."
        actions={<ButtonLink to="/services/new" variant="primary">New virtual service</ButtonLink>}
      />
      {services.isPending ? <LoadingState /> : null}
      {services.isError ? <ErrorState error={services.error} onRetry={() => void services.refetch()} /> : null}
      {services.data?.length === 0 ? (
        <EmptyState title="No virtual services yet">
          <p>A virtual service listens on a VIP and port and hands connections to a pool.</p>
          <ButtonLink to="/services/new" variant="primary">New virtual service</ButtonLink>
        </EmptyState>
      ) : null}
      {services.data?.length ? (
        <div className="table-wrap">
          <table className="table">
            <caption className="visually-hidden">Virtual services</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Listener</th>
                <th scope="col">Protocol</th>
                <th scope="col">Pool</th>
                <th scope="col">State</th>
                <th scope="col"><span className="visually-hidden">Actions</span></th>
              </tr>
            </thead>
            <tbody>
              {services.data.map((service) => (
                <ServiceRow key={service.id} service={service} pools={pools.data} />
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </>
  );
}
