import { screen, waitFor } from '@testing-library/react';
import { Route, Routes } from 'react-router-dom';
import { describe, expect, it } from 'vitest';
import { PendingChangeNotice } from '@/components';
import type { Role } from '@/features/auth';
import { queryKeys } from '@/lib/queryKeys';
import { apiCalls, mockApi, page } from '@/test/mockApi';
import { renderWithProviders } from '@/test/render';
import type { VirtualService } from '../types';
import { EditServicePage, NewServiceFormPage } from './ServiceFormPage';

const web: VirtualService = {
  id: 6, name: 'web', vip: '10.0.0.2', port: 80, protocol: 'http', forwarding: 'proxy', default_pool: 4, default_pool_name: 'web', warnings: [], version: 3,
};

function renderAt(path: string, role: Role = 'admin') {
  mockApi('GET', '/api/v1/auth/me/', { status: 200, body: { id: 1, username: role, is_superuser: false, role } });
  mockApi('GET', '/api/v1/pools/', { status: 200, body: page([{ id: 4, name: 'web', members: [], health_check: null }]) });
  mockApi('GET', '/api/v1/certificates/', { status: 200, body: page([]) });
  mockApi('GET', '/api/v1/virtual-services/6/', { status: 200, body: web });
  mockApi('GET', '/api/v1/rules/', { status: 200, body: page([]) });
  return renderWithProviders(
    <Routes>
      <Route path="/services/new/full" element={<NewServiceFormPage />} />
      <Route path="/services/:id/edit" element={<EditServicePage />} />
      <Route path="/services/:id" element={<><PendingChangeNotice /><h1>Service page</h1></>} />
    </Routes>,
    { path },
  );
}

describe('service form pages', () => {
  it('saves with the version it read and returns to the service page with a pending note', async () => {
    mockApi('PUT', '/api/v1/virtual-services/6/', { status: 200, body: { ...web, version: 4 } });
    const { user } = renderAt('/services/6/edit');
    expect(await screen.findByRole('link', { name: 'Cancel' })).toHaveAttribute('href', '/services/6');
    await user.click(screen.getByRole('button', { name: 'Save changes' }));
    expect(await screen.findByRole('heading', { name: 'Service page' })).toBeInTheDocument();
    expect(apiCalls.find((call) => call.method === 'PUT')?.body).toMatchObject({ name: 'web', version: 3 });
    expect(screen.getByRole('status')).toHaveTextContent('Virtual service web saved.');
  });

  it("refuses to overwrite someone else's change (409) and says so", async () => {
    const detail = 'Changed by someone else since you read it: version 4 is current. Read it again and repeat your change.';
    mockApi('PUT', '/api/v1/virtual-services/6/', { status: 409, body: { detail } });
    const { user } = renderAt('/services/6/edit');
    await user.click(await screen.findByRole('button', { name: 'Save changes' }));
    expect(await screen.findByRole('alert')).toHaveTextContent(detail);
    expect(screen.queryByRole('heading', { name: 'Service page' })).not.toBeInTheDocument();
  });

  it('opens the new service from the full form', async () => {
    mockApi('POST', '/api/v1/virtual-services/', { status: 201, body: { ...web, id: 9, name: 'shop' } });
    const { user } = renderAt('/services/new/full');
    expect(await screen.findByRole('link', { name: 'Use the guided setup' })).toHaveAttribute('href', '/services/new');
    await user.type(await screen.findByRole('textbox', { name: 'Name' }), 'shop');
    await user.type(screen.getByRole('textbox', { name: 'VIP' }), '10.0.0.9');
    await user.selectOptions(screen.getByRole('combobox', { name: 'Pool' }), 'web');
    await user.click(screen.getByRole('button', { name: 'Create virtual service' }));
    expect(await screen.findByRole('heading', { name: 'Service page' })).toBeInTheDocument();
    expect(screen.getByRole('status')).toHaveTextContent('Virtual service shop created.');
  });

  it.each(['viewer', 'operator'] as const)('gives a %s no form to edit', async (role) => {
    const { queryClient } = renderAt('/services/6/edit', role);
    await waitFor(() => expect(queryClient.getQueryData(queryKeys.me)).toMatchObject({ role }));
    expect(await screen.findByText('Changing virtual services needs the admin role')).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Save changes' })).not.toBeInTheDocument();
  });
});
