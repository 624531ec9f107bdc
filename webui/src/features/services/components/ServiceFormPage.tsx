import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router-dom';
import { Alert, ErrorState, LoadingState, PageHeader, Panel } from '@/components';
import { useCertificateChoices, usePoolChoices, useSaveService, useService } from '../hooks/useServices';
import { emptyServiceForm, isIpvs, type ServiceFormValues, toServiceForm, toServiceRequest } from '../types';
import { RulesPanel } from './RulesPanel';
import { ServiceForm } from './ServiceForm';
import { ServiceWarnings } from './ServiceWarnings';

const breadcrumb = <Link to="/services">Virtual services</Link>;

/** The pools and certificates a service form offers, loaded together. */
function useChoices() {
  const pools = usePoolChoices();
  const certificates = useCertificateChoices();
  return {
    pools: pools.data,
    certificates: certificates.data,
    isPending: pools.isPending || certificates.isPending,
    error: pools.error ?? certificates.error,
    refetch: () => Promise.all([pools.refetch(), certificates.refetch()]),
  };
}

export function NewServicePage() {
  const navigate = useNavigate();
  const choices = useChoices();
  const save = useSaveService();
  const onSubmit = async (values: ServiceFormValues) => {
    await save.mutateAsync(toServiceRequest(values));
    navigate('/services');
  };
  return (
    <>
      <PageHeader title="New virtual service" breadcrumb={breadcrumb} description="Rules are added on the service's page once it exists." />
      <Panel title="Settings">
        {choices.isPending ? <LoadingState /> : null}
        {choices.error ? <ErrorState error={choices.error} onRetry={() => void choices.refetch()} /> : null}
        {choices.pools && choices.certificates ? (
          <ServiceForm
            defaultValues={emptyServiceForm()}
            pools={choices.pools}
            certificates={choices.certificates}
            submitLabel="Create virtual service"
            onSubmit={onSubmit}
          />
        ) : null}
      </Panel>
    </>
  );
}

export function EditServicePage() {
  const id = Number(useParams().id);
  const service = useService(id);
  const choices = useChoices();
  const save = useSaveService(id);
  const [saved, setSaved] = useState(false);
  const onSubmit = async (values: ServiceFormValues) => {
    setSaved(false);
    await save.mutateAsync(toServiceRequest(values));
    setSaved(true);
  };
  const error = service.error ?? choices.error;
  return (
    <>
      <PageHeader
        title={service.data ? `Virtual service ${service.data.name}` : 'Virtual service'}
        breadcrumb={breadcrumb}
        description="Changes are stored at once and take effect on the nodes when you apply them."
      />
      {service.isPending || choices.isPending ? <LoadingState /> : null}
      {error ? <ErrorState error={error} onRetry={() => void Promise.all([service.refetch(), choices.refetch()])} /> : null}
      {service.data && choices.pools && choices.certificates ? (
        <div className="stack">
          <ServiceWarnings service={service.data} />
          <Panel title="Settings">
            {saved ? <Alert tone="success">Virtual service saved.</Alert> : null}
            <ServiceForm
              key={service.data.id}
              defaultValues={toServiceForm(service.data)}
              pools={choices.pools}
              certificates={choices.certificates}
              submitLabel="Save changes"
              onSubmit={onSubmit}
            />
          </Panel>
          {/* Content switching is HAProxy's: an IPVS service forwards packets, not requests. */}
          {isIpvs(service.data.forwarding) ? null : <RulesPanel service={service.data} pools={choices.pools} />}
        </div>
      ) : null}
    </>
  );
}
