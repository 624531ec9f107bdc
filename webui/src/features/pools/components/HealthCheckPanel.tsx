import { useState } from 'react';
import { Alert, Button, ConfirmButton, EmptyState, Panel } from '@/components';
import { errorMessage } from '@/lib/api';
import { useDeleteHealthCheck, useSaveHealthCheck } from '../hooks/usePools';
import { type HealthCheckFormValues, type Pool, type PoolLayer, toHealthCheckForm, toHealthCheckRequest } from '../types';
import { HealthCheckForm } from './HealthCheckForm';

export function HealthCheckPanel({ pool, layer = 'unknown' }: { pool: Pool; layer?: PoolLayer }) {
  const check = pool.health_check;
  const [adding, setAdding] = useState(false);
  const save = useSaveHealthCheck(check?.id);
  const remove = useDeleteHealthCheck();
  const [saved, setSaved] = useState(false);

  const onSubmit = async (values: HealthCheckFormValues) => {
    setSaved(false);
    await save.mutateAsync(toHealthCheckRequest(pool.id, values, layer));
    setAdding(false);
    setSaved(true);
  };

  if (!check && !adding) {
    return (
      <Panel title="Health check">
        <EmptyState title="No health check">
          <p>Without one, every enabled member is assumed to be up.</p>
          <Button variant="primary" onClick={() => setAdding(true)}>
            Add health check
          </Button>
        </EmptyState>
      </Panel>
    );
  }

  return (
    <Panel title="Health check">
      {saved && check ? <Alert tone="success">Health check saved.</Alert> : null}
      {remove.isError ? <Alert tone="error">{errorMessage(remove.error)}</Alert> : null}
      <HealthCheckForm
        key={check?.id ?? 'new'}
        defaultValues={toHealthCheckForm(check)}
        submitLabel={check ? 'Save health check' : 'Create health check'}
        onSubmit={onSubmit}
        layer={layer}
        extraActions={
          check ? (
            <ConfirmButton subject="the health check" confirmLabel="Yes, remove" busy={remove.isPending} onConfirm={() => { setSaved(false); remove.mutate(check.id); }}>
              Remove
            </ConfirmButton>
          ) : (
            <Button variant="ghost" onClick={() => setAdding(false)}>
              Cancel
            </Button>
          )
        }
      />
    </Panel>
  );
}
