import { api, listAll, unwrap } from '@/lib/api';
import { pageQuery, type ServerListRequest } from '@/lib/listView';
import type {
  CertificateChoice,
  HealthCheck,
  HealthCheckRequest,
  Member,
  MemberRequest,
  MemberRuntimeChange,
  MemberRuntimeResult,
  Pool,
  PoolRequest,
  PoolService,
} from '../types';

/** One page of the pools, searched and sorted by the API; `count` is how many match. */
export function listPoolPage(request: ServerListRequest) {
  return unwrap(api.GET('/api/v1/pools/', { params: { query: pageQuery(request) } }));
}

/** How many pools there are. */
export async function countPools(): Promise<number> {
  return (await unwrap(api.GET('/api/v1/pools/', { params: { query: { limit: 1 } } }))).count;
}

export function getPool(id: number): Promise<Pool> {
  return unwrap(api.GET('/api/v1/pools/{id}/', { params: { path: { id } } }));
}

export function createPool(body: PoolRequest): Promise<Pool> {
  return unwrap(api.POST('/api/v1/pools/', { body }));
}

export function updatePool(id: number, body: PoolRequest): Promise<Pool> {
  return unwrap(api.PUT('/api/v1/pools/{id}/', { params: { path: { id } }, body }));
}

export async function deletePool(id: number): Promise<void> {
  await unwrap(api.DELETE('/api/v1/pools/{id}/', { params: { path: { id } } }));
}

export function createMember(body: MemberRequest): Promise<Member> {
  return unwrap(api.POST('/api/v1/members/', { body }));
}

export function updateMember(id: number, body: MemberRequest): Promise<Member> {
  return unwrap(api.PUT('/api/v1/members/{id}/', { params: { path: { id } }, body }));
}

/**
 * Changes a live member's weight or state now, through HAProxy's runtime API, as the next
 * revision (other pending changes stay pending). Refused (409, `{detail, problems}`) while
 * the member is not in the applied configuration yet.
 */
export function changeMemberAtRuntime(id: number, change: MemberRuntimeChange): Promise<MemberRuntimeResult> {
  return unwrap(api.POST('/api/v1/members/{id}/runtime/', { params: { path: { id } }, body: change }));
}

export async function deleteMember(id: number): Promise<void> {
  await unwrap(api.DELETE('/api/v1/members/{id}/', { params: { path: { id } } }));
}

export function createHealthCheck(body: HealthCheckRequest): Promise<HealthCheck> {
  return unwrap(api.POST('/api/v1/health-checks/', { body }));
}

export function updateHealthCheck(id: number, body: HealthCheckRequest): Promise<HealthCheck> {
  return unwrap(api.PUT('/api/v1/health-checks/{id}/', { params: { path: { id } }, body }));
}

export async function deleteHealthCheck(id: number): Promise<void> {
  await unwrap(api.DELETE('/api/v1/health-checks/{id}/', { params: { path: { id } } }));
}

/** The certificates a pool can verify its members against (names and ids only). */
export async function listCertificateChoices(): Promise<CertificateChoice[]> {
  const certificates = await listAll((limit, offset) => unwrap(api.GET('/api/v1/certificates/', { params: { query: { limit, offset } } })));
  return certificates.map(({ id, name, is_ca }) => ({ id, name, is_ca }));
}

/**
 * The virtual services whose default pool this is (their forwarding tells the pool's layer).
 * The API has no filter by pool, so all are listed (names and a few fields kept).
 */
export async function listPoolServices(pool: number): Promise<PoolService[]> {
  const services = await listAll((limit, offset) => unwrap(api.GET('/api/v1/virtual-services/', { params: { query: { limit, offset } } })));
  return services.filter((s) => s.default_pool === pool).map(({ id, name, forwarding, default_pool }) => ({ id, name, forwarding, default_pool }));
}
