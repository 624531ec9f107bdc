import { screen, within } from '@testing-library/react';
import { Route, Routes } from 'react-router-dom';
import { describe, expect, it } from 'vitest';
import { mockApi, page } from '@/test/mockApi';
import { renderWithProviders } from '@/test/render';
import type { VirtualService } from '../types';
import { EditServicePage } from './ServiceFormPage';
import { ServicesPage } from './ServicesPage';

const NAT_WARNING =
  'member l4/rs2 (10.0.3.2) is on no network of node lb1: NAT works only when its replies are routed back through the balancer (its gateway must be the balancer).';
const SCHEDULER_WARNING = 'node lb1 runs scheduler wlc instead of dllc: kernel has no dllc scheduler';

const nat: VirtualService = {
  id: 5, name: 'nat', vip: '10.0.0.1', port: 8000, port_end: 8099, protocol: 'tcp', forwarding: 'nat', default_pool: 3, default_pool_name: 'nat', enabled: true,
  warnings: [NAT_WARNING, SCHEDULER_WARNING],
};
const web: VirtualService = { id: 6, name: 'web', vip: '10.0.0.2', port: 80, protocol: 'http', forwarding: 'proxy', default_pool: 4, default_pool_name: 'web', warnings: [] };

function mockChoices() {
  mockApi('GET', '/api/v1/pools/', { status: 200, body: page([{ id: 3, name: 'l4', members: [], health_check: null }, { id: 4, name: 'web', members: [], health_check: null }]) });
  mockApi('GET', '/api/v1/certificates/', { status: 200, body: page([]) });
}

describe('service warnings', () => {
  it('lists each warning under its service, worded and announced politely', async () => {
    mockApi('GET', '/api/v1/virtual-services/', { status: 200, body: page([nat, web]) });
    mockChoices();
    renderWithProviders(<ServicesPage />);

    const warnings = await screen.findByRole('status', { name: 'Warnings for nat' });
    expect(within(warnings).getByText('2 warnings')).toBeInTheDocument();
    expect(within(warnings).getAllByRole('listitem').map((item) => item.textContent)).toEqual([NAT_WARNING, SCHEDULER_WARNING]);
    expect(screen.queryByRole('status', { name: 'Warnings for web' })).not.toBeInTheDocument();

    const row = screen.getByRole('row', { name: /^nat/ });
    expect(row).toHaveTextContent('10.0.0.1:8000-8099');
    expect(row).toHaveTextContent('NAT (IPVS, layer 4)');
  });

  it("shows the warnings on the service's page, whose form is set to NAT and has no rules", async () => {
    mockApi('GET', '/api/v1/auth/me/', { status: 200, body: { id: 1, username: 'admin', is_superuser: false, role: 'admin' } });
    mockApi('GET', '/api/v1/virtual-services/5/', { status: 200, body: nat });
    mockChoices();
    renderWithProviders(
      <Routes>
        <Route path="/services/:id/edit" element={<EditServicePage />} />
      </Routes>,
      { path: '/services/5/edit' },
    );

    const warnings = await screen.findByRole('status', { name: 'Warnings for nat' });
    expect(warnings).toHaveTextContent('2 warnings: this will probably not work as meant');
    expect(within(warnings).getByText(SCHEDULER_WARNING)).toBeInTheDocument();
    expect(screen.getByRole('combobox', { name: 'Forwarding' })).toHaveValue('nat');
    expect(screen.getByRole('spinbutton', { name: 'Last port' })).toHaveValue(8099);
    expect(screen.queryByRole('region', { name: 'Rules' })).not.toBeInTheDocument();
  });
});
