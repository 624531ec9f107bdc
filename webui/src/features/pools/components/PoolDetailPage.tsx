import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router-dom';
import { Alert, ConfirmButton, ErrorState, LoadingState, PageHeader, Panel } from '@/components';
import { ApiError, errorMessage } from '@/lib/api';
import { useCertificateChoices, useDeletePool, usePool, useSavePool } from '../hooks/usePools';
import { type Pool, type PoolFormValues, toPoolForm, toPoolRequest } from '../types';
import { HealthCheckPanel } from './HealthCheckPanel';
import { MembersPanel } from './MembersPanel';
import { PoolForm } from './PoolForm';

function PoolSettings({ pool }: { pool: Pool }) {
  const save = useSavePool(pool.id);
  const certificates = useCertificateChoices();
  const [saved, setSaved] = useState(false);
  const onSubmit = async (values: PoolFormValues) => {
    setSaved(false);
    await save.mutateAsync(toPoolRequest(values));
    setSaved(true);
  };
  return (
    <Panel title="Settings">
      {saved ? <Alert tone="success">Pool saved.</Alert> : null}
      {certificates.isPending ? <LoadingState /> : null}
      {certificates.isError ? <ErrorState error={certificates.error} onRetry={() => void certificates.refetch()} /> : null}
      {certificates.data ? (
        <PoolForm key={pool.id} defaultValues={toPoolForm(pool)} certificates={certificates.data} submitLabel="Save pool" onSubmit={onSubmit} />
      ) : null}
    </Panel>
  );
}

export function PoolDetailPage() {
  const id = Number(useParams().id);
  const pool = usePool(id);
  const remove = useDeletePool();
  const navigate = useNavigate();
  const breadcrumb = <Link to="/pools">Pools</Link>;

  if (pool.isPending) return <LoadingState />;
  if (pool.isError) {
    return (
      <>
        <PageHeader title="Pool" breadcrumb={breadcrumb} />
        <ErrorState error={pool.error} onRetry={() => void pool.refetch()} />
      </>
    );
  }
  const data = pool.data;
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
        <MembersPanel pool={data} />
        <HealthCheckPanel pool={data} />
        <PoolSettings pool={data} />
      </div>
    </>
  );
}
