import { api, listAll, unwrap } from '@/lib/api';
import type { IpvsSync, IpvsSyncRequest, Node, NodeCreated } from '../types';

export function listNodes(): Promise<Node[]> {
  return listAll((limit, offset) => unwrap(api.GET('/api/v1/nodes/', { params: { query: { limit, offset } } })));
}

/** Registers a node; the answer carries its agent token, which the API never shows again. */
export function createNode(name: string): Promise<NodeCreated> {
  return unwrap(api.POST('/api/v1/nodes/', { body: { name } }));
}

export async function deleteNode(id: number): Promise<void> {
  await unwrap(api.DELETE('/api/v1/nodes/{id}/', { params: { path: { id } } }));
}

/** The IPVS connection sync settings (one object for the cluster). */
export function getIpvsSync(): Promise<IpvsSync> {
  return unwrap(api.GET('/api/v1/ipvs-sync/'));
}

/** Stores the sync settings; the nodes get them with the next applied revision. */
export function saveIpvsSync(body: IpvsSyncRequest): Promise<IpvsSync> {
  return unwrap(api.PUT('/api/v1/ipvs-sync/', { body }));
}
