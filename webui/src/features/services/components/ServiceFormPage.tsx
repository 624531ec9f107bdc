import type { ReactNode } from 'react';
import { Link, useNavigate, useParams } from 'react-router-dom';
import { EmptyState, ErrorState, LoadingState, PageHeader, Panel } from '@/components';
import { usePermissions } from '@/features/auth';
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

/** Only admins change configuration: others are told so instead of getting a form the API refuses. */
function AdminOnly({ what, back, children }: { what: string; back: ReactNode; children: ReactNode }) {
  const { canEdit, role } = usePermissions();
  if (!role) return <LoadingState />;
  if (canEdit) return <>{children}</>;
  return (
    <EmptyState title={`${what} needs the admin role`}>
      <p>
        You are signed in as {role}. {back}
      </p>
    </EmptyState>
  );
}

/** /services/new/full: every setting at once, for those who know what they want. */
export function NewServiceFormPage() {
  const navigate = useNavigate();
  const choices = useChoices();
  const save = useSaveService();
  const onSubmit = async (values: ServiceFormValues) => {
    const service = await save.mutateAsync(toServiceRequest(values));
    navigate(`/services/${service.id}`, { state: { pendingChange: `Virtual service ${service.name} created.` } });
  };
  return (
    <>
      <PageHeader
        title="New virtual service"
        breadcrumb={breadcrumb}
        description={
          <>
            Every setting on one page; rules are added on the service's page once it exists. New here? <Link to="/services/new">Use the guided setup</Link>.
          </>
        }
      />
      <AdminOnly what="Creating virtual services" back={<Link to="/services">Back to the virtual services</Link>}>
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
      </AdminOnly>
    </>
  );
}

/** /services/:id/edit: the service's settings and rules; Save goes back to its page. */
export function EditServicePage() {
  const id = Number(useParams().id);
  const navigate = useNavigate();
  const service = useService(id);
  const choices = useChoices();
  const save = useSaveService(id);
  const onSubmit = async (values: ServiceFormValues) => {
    // The version read with the form: someone else's save in between is refused (409), not overwritten.
    const saved = await save.mutateAsync({ ...toServiceRequest(values), version: service.data?.version });
    navigate(`/services/${id}`, { state: { pendingChange: `Virtual service ${saved.name} saved.` } });
  };
  const error = service.error ?? choices.error;
  const back = <Link to={`/services/${id}`}>Back to the service</Link>;
  return (
    <>
      <PageHeader
        title={service.data ? `Edit virtual service ${service.data.name}` : 'Edit virtual service'}
        breadcrumb={
          <>
            {breadcrumb} / {service.data ? <Link to={`/services/${id}`}>{service.data.name}</Link> : null}
          </>
        }
        description="Changes are stored at once and take effect on the nodes when you apply them."
      />
      <AdminOnly what="Changing virtual services" back={back}>
        {service.isPending || choices.isPending ? <LoadingState /> : null}
        {error ? <ErrorState error={error} onRetry={() => void Promise.all([service.refetch(), choices.refetch()])} /> : null}
        {service.data && choices.pools && choices.certificates ? (
          <div className="stack">
            <ServiceWarnings service={service.data} />
            <Panel title="Settings">
              <ServiceForm
                key={service.data.id}
                defaultValues={toServiceForm(service.data)}
                pools={choices.pools}
                certificates={choices.certificates}
                submitLabel="Save changes"
                onSubmit={onSubmit}
                cancelTo={`/services/${id}`}
              />
            </Panel>
            {/* Content switching is HAProxy's: an IPVS service forwards packets, not requests. */}
            {isIpvs(service.data.forwarding) ? null : <RulesPanel service={service.data} pools={choices.pools} />}
          </div>
        ) : null}
      </AdminOnly>
    </>
  );
}
