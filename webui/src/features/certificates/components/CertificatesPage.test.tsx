import { screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { apiCalls, mockApi, page } from '@/test/mockApi';
import type { Role } from '@/features/auth';
import { renderWithProviders } from '@/test/render';
import { sessionLoaded, signedInAs } from '@/test/session';
import type { Certificate } from '../types';
import { CertificatesPage } from './CertificatesPage';

const at = '2026-01-01T00:00:00Z';
const certificate = (fields: Partial<Certificate>): Certificate => ({
  id: 1,
  name: 'web',
  description: '',
  certificate: '-----BEGIN CERTIFICATE-----',
  chain: '',
  has_key: true,
  key_type: 'ecdsa-p256',
  subject: 'CN=www.example.com,O=Example',
  issuer: 'CN=www.example.com,O=Example',
  sans: ['www.example.com', 'example.com'],
  not_before: at,
  not_after: at,
  expires_in_days: 364,
  fingerprint: 'ab',
  is_ca: false,
  warnings: [],
  created: at,
  updated: at,
  ...fields,
});

const stored = [
  certificate({}),
  certificate({ id: 2, name: 'old', subject: 'CN=old.example.com', sans: [], expires_in_days: 12, warnings: ['self-signed'] }),
  certificate({ id: 3, name: 'corp-ca', subject: 'CN=Corp CA', has_key: false, key_type: '', is_ca: true, sans: [] }),
];

function renderPage(role: Role = 'admin') {
  signedInAs(role);
  mockApi('GET', '/api/v1/certificates/', { status: 200, body: page(stored) });
  return renderWithProviders(<CertificatesPage />);
}

describe('CertificatesPage', () => {
  it('lists each certificate with its CN, names, expiry, key and warnings', async () => {
    renderPage();
    const table = await screen.findByRole('table', { name: 'Certificates' });
    const row = (name: string) => within(table).getByRole('row', { name: new RegExp(`^${name}`) });
    expect(row('web')).toHaveTextContent('www.example.com');
    expect(row('web')).toHaveTextContent('www.example.com, example.com');
    expect(row('web')).toHaveTextContent('in 364 days');
    expect(row('web')).toHaveTextContent('ECDSA P-256');
    expect(within(row('old')).getByText('in 12 days')).toHaveClass('badge-warning');
    expect(row('old')).toHaveTextContent('self-signed');
    expect(within(row('web')).queryByText('in 364 days')).not.toHaveClass('badge');
    expect(row('corp-ca')).toHaveTextContent('none (CA bundle)');
  });

  it('shows why a certificate in use was not deleted', async () => {
    mockApi('DELETE', '/api/v1/certificates/1/', { status: 409, body: { detail: 'still in use by: virtual-services/web' } });
    const { user } = renderPage();
    await user.click(await screen.findByRole('button', { name: 'Delete certificate web' }));
    await user.click(screen.getByRole('button', { name: 'Yes, delete: certificate web' }));
    expect(await screen.findByRole('alert')).toHaveTextContent('still in use by: virtual-services/web');
  });

  it('generates a self-signed certificate with its alternative names', async () => {
    mockApi('POST', '/api/v1/certificates/generate/', { status: 201, body: certificate({ id: 4, name: 'lab' }) });
    const { user } = renderPage();
    const form = await screen.findByRole('form', { name: 'Generate a self-signed certificate' });
    await user.type(within(form).getByRole('textbox', { name: 'Name' }), 'lab');
    await user.type(within(form).getByRole('textbox', { name: 'Common name' }), 'lab.example.com');
    await user.type(within(form).getByRole('textbox', { name: 'Subject alternative names' }), 'lab.example.com\n\n10.0.0.1\n');
    await user.selectOptions(within(form).getByRole('combobox', { name: 'Key type' }), 'rsa-2048');
    await user.click(within(form).getByRole('button', { name: 'Generate certificate' }));
    expect(await screen.findByText('Certificate lab stored.')).toBeInTheDocument();
    expect(apiCalls).toContainEqual({
      method: 'POST',
      path: '/api/v1/certificates/generate/',
      body: { name: 'lab', description: '', common_name: 'lab.example.com', sans: ['lab.example.com', '10.0.0.1'], key_type: 'rsa-2048', days: 365 },
    });
  });

  it("puts the server's refusal of an upload next to the PEM it concerns", async () => {
    mockApi('POST', '/api/v1/certificates/', {
      status: 400,
      body: { private_key: ['The private key does not match the certificate.'] },
    });
    const { user } = renderPage();
    const form = await screen.findByRole('form', { name: 'Upload a certificate' });
    await user.type(within(form).getByRole('textbox', { name: 'Name' }), 'up');
    await user.type(within(form).getByRole('textbox', { name: 'Certificate (PEM)' }), '-----BEGIN CERTIFICATE-----');
    await user.type(within(form).getByRole('textbox', { name: 'Private key (PEM)' }), '-----BEGIN PRIVATE KEY-----');
    await user.click(within(form).getByRole('button', { name: 'Upload certificate' }));
    const key = within(form).getByRole('textbox', { name: 'Private key (PEM)' });
    expect(await within(form).findByText('The private key does not match the certificate.')).toBeInTheDocument();
    expect(key).toHaveAccessibleDescription(/does not match/);
    expect(apiCalls.at(-1)?.body).toEqual({
      name: 'up', description: '', certificate: '-----BEGIN CERTIFICATE-----', private_key: '-----BEGIN PRIVATE KEY-----',
    });
  });

  it.each(['viewer', 'operator'] as const)('shows a %s the certificates without upload, generate or delete', async (role) => {
    const { queryClient } = renderPage(role);
    await sessionLoaded(queryClient);
    const table = await screen.findByRole('table', { name: 'Certificates' });
    expect(within(table).getAllByRole('row')).toHaveLength(4);
    expect(within(table).getAllByRole('columnheader')).toHaveLength(6);
    await screen.findByRole('heading', { name: 'Stored certificates' });
    expect(screen.queryByRole('button')).not.toBeInTheDocument();
    expect(screen.queryByRole('form')).not.toBeInTheDocument();
    expect(screen.queryByRole('heading', { name: 'Upload a certificate' })).not.toBeInTheDocument();
  });

  it('tells a viewer with no certificates who adds them', async () => {
    signedInAs('viewer');
    mockApi('GET', '/api/v1/certificates/', { status: 200, body: page([]) });
    renderWithProviders(<CertificatesPage />);
    expect(await screen.findByText('An admin generates or uploads them; they then appear here.')).toBeInTheDocument();
  });
});
