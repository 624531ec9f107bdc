import { api, listAll, unwrap } from '@/lib/api';
import type { HaEvent, HaEventFilters, HaGroup, HaGroupRequest, HaNode } from '../types';

export function listHaGroups(): Promise<HaGroup[]> {
  return listAll((limit, offset) => unwrap(api.GET('/api/v1/ha-groups/', { params: { query: { limit, offset } } })));
}

export function createHaGroup(body: HaGroupRequest): Promise<HaGroup> {
  return unwrap(api.POST('/api/v1/ha-groups/', { body }));
}

/** Replaces the group; its node rows are replaced as a whole. */
export function updateHaGroup(id: number, body: HaGroupRequest): Promise<HaGroup> {
  return unwrap(api.PUT('/api/v1/ha-groups/{id}/', { params: { path: { id } }, body }));
}

/** Refused (409) while the IPVS connection sync follows the group. */
export async function deleteHaGroup(id: number): Promise<void> {
  await unwrap(api.DELETE('/api/v1/ha-groups/{id}/', { params: { path: { id } } }));
}

/** The nodes a group can hold, with the VRRP states their agents last reported. */
export async function listHaNodes(): Promise<HaNode[]> {
  const nodes = await listAll((limit, offset) => unwrap(api.GET('/api/v1/nodes/', { params: { query: { limit, offset } } })));
  return nodes.map(({ id, name, address, standby, vrrp }) => ({ id, name, address, standby, vrrp: vrrp ?? [] }));
}

export const HA_EVENTS_SHOWN = 100;

/** The newest role changes (one page), optionally of one node and one group (by name). */
export async function listHaEvents(filters: HaEventFilters): Promise<{ count: number; results: HaEvent[] }> {
  const query = { limit: HA_EVENTS_SHOWN, offset: 0, ...(filters.node ? { node: filters.node } : {}), ...(filters.group ? { group: filters.group } : {}) };
  return unwrap(api.GET('/api/v1/ha-events/', { params: { query } }));
}
