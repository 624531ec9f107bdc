import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router-dom';
import { Alert, ConfirmButton, ErrorState, type Fact, Facts, LoadingState, PageHeader, Panel } from '@/components';
import { usePermissions } from '@/features/auth';
import { ApiError, errorMessage } from '@/lib/api';
import { useCertificateChoices, useDeletePool, usePool, usePoolServices, useSavePool } from '../hooks/usePools';
import { algorithmLabel, describePoolLayer, type Pool, type PoolFormValues, poolLayer, type PoolLayer, type PoolService, toPoolForm, toPoolRequest } from '../types';
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

/** What a non-admin sees instead of the forms: the settings that shape traffic, read-only. */
function PoolFacts({ pool }: { pool: Pool }) {
  const check = pool.health_check;
  const poolFacts: Fact[] = [
    ['Algorithm', algorithmLabel(pool.algorithm)],
    ['Persistence', pool.persistence?.type ?? 'none'],
    ['Description', pool.description || '—'],
  ];
  const checkFacts: Fact[] = check
    ? [
        ['Type', check.type ?? 'tcp'],
        ...(check.path ? ([['Request', `${check.method ?? 'GET'} ${check.path}`]] as Fact[]) : []),
        ...(check.expected_status ? ([['Expected status', check.expected_status]] as Fact[]) : []),
        ['Interval', `${check.interval_ms ?? 2000} ms`],
        ['Rise / fall', `${check.rise ?? 2} / ${check.fall ?? 3}`],
      ]
    : [['Type', 'none: every enabled member is assumed up']];
  return (
    <>
      <Panel title="Health check">
        <Facts items={checkFacts} />
      </Panel>
      <Panel title="Settings">
        <Facts items={poolFacts} />
      </Panel>
    </>
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
  const { canEdit } = usePermissions();
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
          canEdit ? (
            <ConfirmButton subject={`pool ${data.name}`} label={`Delete pool ${data.name}`} busy={remove.isPending} onConfirm={() => remove.mutate(data.id, { onSuccess: () => navigate('/pools') })}>
              Delete pool
            </ConfirmButton>
          ) : undefined
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
        {canEdit ? (
          <>
            <HealthCheckPanel pool={data} layer={layer} />
            <PoolSettings pool={data} layer={layer} />
          </>
        ) : (
          <PoolFacts pool={data} />
        )}
      </div>
    </>
  );
}
