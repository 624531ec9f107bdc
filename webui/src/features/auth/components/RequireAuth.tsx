import type { ReactNode } from 'react';
import { Navigate, useLocation } from 'react-router-dom';
import { ErrorState, LoadingState } from '@/components';
import { useCurrentUser } from '../hooks/useSession';

/** Renders its children for a signed-in user; sends anyone else to the sign-in page. */
export function RequireAuth({ children }: { children: ReactNode }) {
  const location = useLocation();
  const user = useCurrentUser();
  if (user.isPending) return <LoadingState label="Checking your session…" />;
  if (user.isError) return <ErrorState error={user.error} onRetry={() => void user.refetch()} />;
  if (!user.data) {
    const next = encodeURIComponent(location.pathname + location.search);
    return <Navigate to={`/sign-in?next=${next}`} replace />;
  }
  return <>{children}</>;
}
