import { api, listAll, unwrap } from '@/lib/api';
import { pageQuery, type ServerListRequest } from '@/lib/listView';
import type { CertificateChoice, PoolChoice, VirtualService, VirtualServiceRequest } from '../types';

/** One page of the services, searched and sorted by the API; `count` is how many match. */
export function listServicePage(request: ServerListRequest) {
  return unwrap(api.GET('/api/v1/virtual-services/', { params: { query: pageQuery(request) } }));
}

/** How many services there are. */
export async function countServices(): Promise<number> {
  return (await unwrap(api.GET('/api/v1/virtual-services/', { params: { query: { limit: 1 } } }))).count;
}

export function getService(id: number): Promise<VirtualService> {
  return unwrap(api.GET('/api/v1/virtual-services/{id}/', { params: { path: { id } } }));
}

export function createService(body: VirtualServiceRequest): Promise<VirtualService> {
  return unwrap(api.POST('/api/v1/virtual-services/', { body }));
}

export function updateService(id: number, body: VirtualServiceRequest): Promise<VirtualService> {
  return unwrap(api.PUT('/api/v1/virtual-services/{id}/', { params: { path: { id } }, body }));
}

export async function deleteService(id: number): Promise<void> {
  await unwrap(api.DELETE('/api/v1/virtual-services/{id}/', { params: { path: { id } } }));
}

/** The pools a virtual service can point at (names and ids only). */
export async function listPoolChoices(): Promise<PoolChoice[]> {
  const pools = await listAll((limit, offset) => unwrap(api.GET('/api/v1/pools/', { params: { query: { limit, offset } } })));
  return pools.map(({ id, name }) => ({ id, name }));
}

/** The certificates a virtual service can present or verify clients with (no content). */
export async function listCertificateChoices(): Promise<CertificateChoice[]> {
  const certificates = await listAll((limit, offset) => unwrap(api.GET('/api/v1/certificates/', { params: { query: { limit, offset } } })));
  return certificates.map(({ id, name, has_key, is_ca }) => ({ id, name, has_key, is_ca }));
}
