import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router-dom';
import { Alert, ConfirmButton, ErrorState, LoadingState, PageHeader, Panel } from '@/components';
import { ApiError, errorMessage } from '@/lib/api';
import { useCertificateChoices, useDeletePool, usePool, usePoolServices, useSavePool } from '../hooks/usePools';
import { describePoolLayer, type Pool, type PoolFormValues, poolLayer, type PoolLayer, type PoolService, toPoolForm, toPoolRequest } from '../types';
import { HealthCheckPanel } from './HealthCheckPanel';
import { MembersPanel } from './MembersPanel';
import { PoolForm } from './PoolForm';

function PoolSettings({ pool, layer }: { pool: Pool; layer: PoolLayer }) {
  const save = useSavePool(pool.id);
  const certificates = useCertificateChoices();
  const [saved, setSaved] = useState(false);
  const onSubmit = async (values: PoolFormValues) => {
    setSaved(false);
    await save.mutateAsync(toPoolRequest(values, layer));
    setSaved(true);
  };
  return (
    <Panel title="Settings">
      {saved ? <Alert tone="success">Pool saved.</Alert> : null}
      {certificates.isPending ? <LoadingState /> : null}
      {certificates.isError ? <ErrorState error={certificates.error} onRetry={() => void certificates.refetch()} /> : null}
      {certificates.data ? (
        <PoolForm
          key={`${pool.id}-${layer}`}
          defaultValues={toPoolForm(pool)}
          certificates={certificates.data}
          submitLabel="Save pool"
          onSubmit={onSubmit}
          layer={layer}
        />
      ) : null}
    </Panel>
  );
}

/** Which layer the pool serves and the services that decide it. */
function PoolLayerNote({ layer, services }: { layer: PoolLayer; services: readonly PoolService[] | undefined }) {
  return (
    <p className="muted">
      {describePoolLayer(layer, services)}
      {services?.length ? (
        <>
          {' '}Used by{' '}
          {services.map((service, index) => (
            <span key={service.id}>
              {index ? ', ' : null}
              <Link to={`/services/${service.id}`}>{service.name}</Link>
            </span>
          ))}
          .
        </>
      ) : null}
    </p>
  );
}

export function PoolDetailPage() {
  const id = Number(useParams().id);
  const pool = usePool(id);
  const services = usePoolServices(id);
  const remove = useDeletePool();
  const navigate = useNavigate();
  const breadcrumb = <Link to="/pools">Pools</Link>;

  // The forms wait for the layer (a failed look-up leaves it unknown: every setting offered).
  if (pool.isPending || services.isPending) return <LoadingState />;
  if (pool.isError) {
    return (
      <>
        <PageHeader title="Pool" breadcrumb={breadcrumb} />
        <ErrorState error={pool.error} onRetry={() => void pool.refetch()} />
      </>
    );
  }
  const data = pool.data;
  const layer = poolLayer(services.data);
  return (
    <>
      <PageHeader
        title={`Pool ${data.name}`}
        breadcrumb={breadcrumb}
        description="Changes are stored at once and take effect on the nodes when you apply them."
        actions={
          <ConfirmButton subject={`pool ${data.name}`} label={`Delete pool ${data.name}`} busy={remove.isPending} onConfirm={() => remove.mutate(data.id, { onSuccess: () => navigate('/pools') })}>
            Delete pool
          </ConfirmButton>
        }
      />
      <div className="stack">
        {remove.isError ? (
          <Alert tone="error" title="The pool was not deleted">
            <p>{errorMessage(remove.error)}</p>
            {remove.error instanceof ApiError && remove.error.status === 409 ? (
              <p>
                Point those <Link to="/services">virtual services</Link> at another pool, or delete them, first.
              </p>
            ) : null}
          </Alert>
        ) : null}
        <PoolLayerNote layer={layer} services={services.data} />
        <MembersPanel pool={data} layer={layer} />
        <HealthCheckPanel pool={data} layer={layer} />
        <PoolSettings pool={data} layer={layer} />
      </div>
    </>
  );
}
