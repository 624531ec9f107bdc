import { Link, useNavigate } from 'react-router-dom';
import { ButtonLink, EmptyState, ErrorState, LoadingState, PageHeader, Panel } from '@/components';
import { usePermissions } from '@/features/auth';
import { useCertificateChoices, useSavePool } from '../hooks/usePools';
import { type PoolFormValues, toPoolForm, toPoolRequest } from '../types';
import { PoolForm } from './PoolForm';

export function NewPoolPage() {
  const navigate = useNavigate();
  const save = useSavePool();
  const certificates = useCertificateChoices();
  const { canEdit, role } = usePermissions();
  const onSubmit = async (values: PoolFormValues) => {
    const pool = await save.mutateAsync(toPoolRequest(values));
    navigate(`/pools/${pool.id}`);
  };
  return (
    <>
      <PageHeader
        title="New pool"
        description="After creating the pool you add its members and health check."
        breadcrumb={<Link to="/pools">Pools</Link>}
      />
      {role && !canEdit ? (
        <EmptyState title="Creating pools needs the admin role">
          <p>
            You are signed in as {role}. <Link to="/pools">Back to the pools</Link>
          </p>
        </EmptyState>
      ) : (
        <Panel title="Settings">
          {certificates.isPending ? <LoadingState /> : null}
          {certificates.isError ? <ErrorState error={certificates.error} onRetry={() => void certificates.refetch()} /> : null}
          {certificates.data ? (
            <PoolForm
              defaultValues={toPoolForm()}
              certificates={certificates.data}
              submitLabel="Create pool"
              onSubmit={onSubmit}
              extraActions={<ButtonLink to="/pools" variant="ghost">Cancel</ButtonLink>}
            />
          ) : null}
        </Panel>
      )}
    </>
  );
}
