import { Link, useNavigate, useParams } from 'react-router-dom';
import { ErrorState, LoadingState, PageHeader, Panel } from '@/components';
import { usePoolChoices, useSaveService, useService } from '../hooks/useServices';
import { emptyServiceForm, type ServiceFormValues, toServiceForm, toServiceRequest } from '../types';
import { ServiceForm } from './ServiceForm';

const breadcrumb = <Link to="/services">Virtual services</Link>;

export function NewServicePage() {
  const navigate = useNavigate();
  const pools = usePoolChoices();
  const save = useSaveService();
  const onSubmit = async (values: ServiceFormValues) => {
    await save.mutateAsync(toServiceRequest(values));
    navigate('/services');
  };
  return (
    <>
      <PageHeader title="New virtual service" breadcrumb={breadcrumb} />
      <Panel title="Settings">
        {pools.isPending ? <LoadingState /> : null}
        {pools.isError ? <ErrorState error={pools.error} onRetry={() => void pools.refetch()} /> : null}
        {pools.data ? (
          <ServiceForm defaultValues={emptyServiceForm()} pools={pools.data} submitLabel="Create virtual service" onSubmit={onSubmit} />
        ) : null}
      </Panel>
    </>
  );
}

export function EditServicePage() {
  const id = Number(useParams().id);
  const navigate = useNavigate();
  const service = useService(id);
  const pools = usePoolChoices();
  const save = useSaveService(id);
  const onSubmit = async (values: ServiceFormValues) => {
    await save.mutateAsync(toServiceRequest(values));
    navigate('/services');
  };
  const error = service.error ?? pools.error;
  return (
    <>
      <PageHeader title={service.data ? `Edit ${service.data.name}` : 'Edit virtual service'} breadcrumb={breadcrumb} />
      <Panel title="Settings">
        {service.isPending || pools.isPending ? <LoadingState /> : null}
        {error ? <ErrorState error={error} onRetry={() => void Promise.all([service.refetch(), pools.refetch()])} /> : null}
        {service.data && pools.data ? (
          <ServiceForm defaultValues={toServiceForm(service.data)} pools={pools.data} submitLabel="Save changes" onSubmit={onSubmit} />
        ) : null}
      </Panel>
    </>
  );
}
