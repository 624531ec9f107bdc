import { Link, useNavigate } from 'react-router-dom';
import { ButtonLink, PageHeader, Panel } from '@/components';
import { useSavePool } from '../hooks/usePools';
import { type PoolFormValues, toPoolForm } from '../types';
import { PoolForm } from './PoolForm';

export function NewPoolPage() {
  const navigate = useNavigate();
  const save = useSavePool();
  const onSubmit = async (values: PoolFormValues) => {
    const pool = await save.mutateAsync(values);
    navigate(`/pools/${pool.id}`);
  };
  return (
    <>
      <PageHeader
        title="New pool"
        description="After creating the pool you add its members and health check."
        breadcrumb={<Link to="/pools">Pools</Link>}
      />
      <Panel title="Settings">
        <PoolForm
          defaultValues={toPoolForm()}
          submitLabel="Create pool"
          onSubmit={onSubmit}
          extraActions={<ButtonLink to="/pools" variant="ghost">Cancel</ButtonLink>}
        />
      </Panel>
    </>
  );
}
