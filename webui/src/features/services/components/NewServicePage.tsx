import { Link } from 'react-router-dom';
import { ButtonLink, EmptyState, ErrorState, LoadingState, PageHeader, Panel } from '@/components';
import { usePermissions } from '@/features/auth';
import { useCertificateChoices, usePoolChoices } from '../hooks/useServices';
import { ServiceWizard } from './ServiceWizard';

/** /services/new: the guided wizard, with the complete form one link away. */
export function NewServicePage() {
  const { canEdit, role } = usePermissions();
  const pools = usePoolChoices();
  const certificates = useCertificateChoices();
  const error = pools.error ?? certificates.error;
  return (
    <>
      <PageHeader
        title="New virtual service"
        breadcrumb={<Link to="/services">Virtual services</Link>}
        description="A few questions, then the service, its pool and members are created together. Every other setting is on their pages afterwards."
        actions={
          canEdit ? (
            <ButtonLink to="/services/new/full" variant="ghost">
              Use the full form instead
            </ButtonLink>
          ) : undefined
        }
      />
      {role && !canEdit ? (
        <EmptyState title="Creating virtual services needs the admin role">
          <p>
            You are signed in as {role}. <Link to="/services">Back to the virtual services</Link>
          </p>
        </EmptyState>
      ) : (
        <Panel title="Guided setup">
          {pools.isPending || certificates.isPending ? <LoadingState /> : null}
          {error ? <ErrorState error={error} onRetry={() => void Promise.all([pools.refetch(), certificates.refetch()])} /> : null}
          {pools.data && certificates.data ? <ServiceWizard pools={pools.data} certificates={certificates.data} /> : null}
        </Panel>
      )}
    </>
  );
}
