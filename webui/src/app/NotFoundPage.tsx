import { useLocation } from 'react-router-dom';
import { ButtonLink, EmptyState, PageHeader } from '@/components';

export function NotFoundPage() {
  const { pathname } = useLocation();
  return (
    <>
      <PageHeader title="Page not found" />
      <EmptyState title="There is nothing at this address.">
        <p>
          <code>{pathname}</code> is not a page of the console: the link may be old, or the object it showed was deleted.
        </p>
        <p className="state-actions">
          <ButtonLink to="/" variant="primary">
            Go to the dashboard
          </ButtonLink>
          <ButtonLink to="/services">Go to virtual services</ButtonLink>
        </p>
      </EmptyState>
    </>
  );
}
