import { createBrowserRouter, Navigate, type RouteObject } from 'react-router-dom';
import { RequireAuth, SignInPage } from '@/features/auth';
import { CertificatesPage } from '@/features/certificates';
import { HaPage } from '@/features/ha';
import { NodesPage } from '@/features/nodes';
import { NewPoolPage, PoolDetailPage, PoolsPage } from '@/features/pools';
import { RevisionsPage } from '@/features/revisions';
import { EditServicePage, NewServicePage, ServicesPage } from '@/features/services';
import { AppShell } from './AppShell';
import { NotFoundPage } from './NotFoundPage';
import { RouteError } from './RouteError';

export const routes: RouteObject[] = [
  { path: '/sign-in', element: <SignInPage />, errorElement: <RouteError /> },
  {
    element: (
      <RequireAuth>
        <AppShell />
      </RequireAuth>
    ),
    errorElement: <RouteError />,
    children: [
      { index: true, element: <Navigate to="/services" replace /> },
      { path: 'services', element: <ServicesPage /> },
      { path: 'services/new', element: <NewServicePage /> },
      { path: 'services/:id', element: <EditServicePage /> },
      { path: 'pools', element: <PoolsPage /> },
      { path: 'pools/new', element: <NewPoolPage /> },
      { path: 'pools/:id', element: <PoolDetailPage /> },
      { path: 'certificates', element: <CertificatesPage /> },
      { path: 'revisions', element: <RevisionsPage /> },
      { path: 'nodes', element: <NodesPage /> },
      { path: 'ha', element: <HaPage /> },
      { path: '*', element: <NotFoundPage /> },
    ],
  },
];

export function createAppRouter() {
  return createBrowserRouter(routes);
}
