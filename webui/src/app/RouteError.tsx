import { isRouteErrorResponse, useRouteError } from 'react-router-dom';
import { ButtonLink, EmptyState } from '@/components';

/** Last line of defence when a page throws while rendering. */
export function RouteError() {
  const error = useRouteError();
  const detail = isRouteErrorResponse(error) ? `${error.status} ${error.statusText}` : error instanceof Error ? error.message : String(error);
  return (
    <main className="content">
      <EmptyState title="Something went wrong on this page.">
        <p className="mono">{detail}</p>
        <ButtonLink to="/services" variant="primary">
          Back to the console
        </ButtonLink>
      </EmptyState>
    </main>
  );
}
