import { useState } from 'react';
import { Alert, ErrorState, LoadingState, Panel } from '@/components';
import { useHaGroupChoices, useIpvsSync, useSaveIpvsSync } from '../hooks/useNodes';
import { type IpvsSyncFormValues, toIpvsSyncForm, toIpvsSyncRequest } from '../types';
import { IpvsSyncForm } from './IpvsSyncForm';
import { IpvsSyncSummary } from './IpvsSyncSummary';

/** IPVS connection synchronisation between the balancers, applied with the next revision; admins edit it. */
export function IpvsSyncPanel({ canEdit }: { canEdit: boolean }) {
  const sync = useIpvsSync();
  const haGroups = useHaGroupChoices();
  const failed = sync.isError ? sync : haGroups.isError ? haGroups : null;
  const save = useSaveIpvsSync();
  const [saved, setSaved] = useState(false);
  const onSubmit = async (values: IpvsSyncFormValues) => {
    setSaved(false);
    await save.mutateAsync(toIpvsSyncRequest(values));
    setSaved(true);
  };
  return (
    <Panel title="IPVS connection sync">
      <p className="muted">
        For layer-4 (IPVS) services: each balancer sends its connection table to the others, so a backup that takes over keeps the clients'
        connections. Takes effect on the nodes when you apply.
      </p>
      {sync.isPending || haGroups.isPending ? <LoadingState /> : null}
      {failed ? <ErrorState error={failed.error} onRetry={() => void failed.refetch()} /> : null}
      {saved ? <Alert tone="success">Sync settings saved; apply to put them on the nodes.</Alert> : null}
      {sync.data && haGroups.data && canEdit ? <IpvsSyncForm defaultValues={toIpvsSyncForm(sync.data)} haGroups={haGroups.data} onSubmit={onSubmit} /> : null}
      {sync.data && haGroups.data && !canEdit ? <IpvsSyncSummary sync={sync.data} haGroups={haGroups.data} /> : null}
    </Panel>
  );
}
