import { createBrowserRouter, type RouteObject } from 'react-router-dom';
import { AccountPage, TokensPage, UsersPage } from '@/features/accounts';
import { AuditPage } from '@/features/audit';
import { RequireAuth, SignInPage } from '@/features/auth';
import { CertificatesPage } from '@/features/certificates';
import { DashboardPage } from '@/features/dashboard';
import { HaPage } from '@/features/ha';
import { NodesPage } from '@/features/nodes';
import { NewPoolPage, PoolDetailPage, PoolMembers, PoolsPage } from '@/features/pools';
import { RevisionDetailPage, RevisionsPage } from '@/features/revisions';
import { EditServicePage, NewServiceFormPage, NewServicePage, ServiceDetailPage, ServicesPage } from '@/features/services';
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
      { index: true, element: <DashboardPage /> },
      { path: 'services', element: <ServicesPage /> },
      { path: 'services/new', element: <NewServicePage /> },
      { path: 'services/new/full', element: <NewServiceFormPage /> },
      { path: 'services/:id', element: <ServiceDetailPage renderPool={(id) => <PoolMembers poolId={id} />} /> },
      { path: 'services/:id/edit', element: <EditServicePage /> },
      { path: 'pools', element: <PoolsPage /> },
      { path: 'pools/new', element: <NewPoolPage /> },
      { path: 'pools/:id', element: <PoolDetailPage /> },
      { path: 'certificates', element: <CertificatesPage /> },
      { path: 'revisions', element: <RevisionsPage /> },
      { path: 'revisions/:id', element: <RevisionDetailPage /> },
      { path: 'nodes', element: <NodesPage /> },
      { path: 'ha', element: <HaPage /> },
      { path: 'audit', element: <AuditPage /> },
      { path: 'users', element: <UsersPage /> },
      { path: 'tokens', element: <TokensPage /> },
      { path: 'account', element: <AccountPage /> },
      { path: '*', element: <NotFoundPage /> },
    ],
  },
];

export function createAppRouter() {
  return createBrowserRouter(routes);
}
