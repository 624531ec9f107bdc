import { ButtonLink, EmptyState, PageHeader } from '@/components';

export function NotFoundPage() {
  return (
    <>
      <PageHeader title="Page not found" />
      <EmptyState title="There is nothing at this address.">
        <ButtonLink to="/services" variant="primary">
          Go to virtual services
        </ButtonLink>
      </EmptyState>
    </>
  );
}
