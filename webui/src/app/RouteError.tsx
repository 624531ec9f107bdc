import { isRouteErrorResponse, useRouteError } from 'react-router-dom';
import { Button, ButtonLink, EmptyState } from '@/components';

/** Last line of defence when a page throws while rendering: say what broke and offer a way on. */
export function RouteError() {
  const error = useRouteError();
  const detail = isRouteErrorResponse(error) ? `${error.status} ${error.statusText}` : error instanceof Error ? error.message : String(error);
  return (
    <main id="main" className="content" tabIndex={-1}>
      <h1 className="visually-hidden">Error</h1>
      <div role="alert">
        <EmptyState title="Something went wrong on this page.">
          <p className="mono">{detail}</p>
          <p className="state-actions">
            <Button variant="primary" onClick={() => window.location.reload()}>
              Reload the page
            </Button>
            <ButtonLink to="/">Go to the dashboard</ButtonLink>
          </p>
        </EmptyState>
      </div>
    </main>
  );
}
