import { api, listAll, unwrap } from '@/lib/api';
import type { DaemonEvent, HaGroupChoice, IpvsSync, IpvsSyncRequest, JoinCode, JoinCodeCreated, NewestRevision, Node, NodeCreated, NodeStandbyResult, Replication, Switchover } from '../types';

export function listNodes(): Promise<Node[]> {
  return listAll((limit, offset) => unwrap(api.GET('/api/v1/nodes/', { params: { query: { limit, offset } } })));
}

/** Registers a node; the answer carries its agent token, which the API never shows again. */
export function createNode(name: string): Promise<NodeCreated> {
  return unwrap(api.POST('/api/v1/nodes/', { body: { name } }));
}

/** The node's own address on the HA segment (VRRP unicast source, HAProxy peer); null for none. */
export function updateNodeAddress(id: number, address: string | null): Promise<Node> {
  return unwrap(api.PATCH('/api/v1/nodes/{id}/', { params: { path: { id } }, body: { address } }));
}

/**
 * Hands the node's master roles to its peers now (`true`), or lets it take part again, as
 * the next revision (pending edits stay pending). Refused (409, `{detail, problems}`) while
 * the node is not in the applied configuration yet.
 */
export function setNodeStandby(id: number, standby: boolean): Promise<NodeStandbyResult> {
  return unwrap(api.POST('/api/v1/nodes/{id}/standby/', { params: { path: { id } }, body: { standby } }));
}

export async function deleteNode(id: number): Promise<void> {
  await unwrap(api.DELETE('/api/v1/nodes/{id}/', { params: { path: { id } } }));
}

/** The newest revision (what every node should run), or null before the first apply. */
export async function getNewestRevision(): Promise<NewestRevision | null> {
  const page = await unwrap(api.GET('/api/v1/revisions/', { params: { query: { limit: 1, offset: 0 } } }));
  const newest = page.results[0];
  return newest ? { number: newest.number, live: newest.live } : null;
}

/** The HA groups the connection sync can follow (names and ids only). */
export async function listHaGroupChoices(): Promise<HaGroupChoice[]> {
  const groups = await listAll((limit, offset) => unwrap(api.GET('/api/v1/ha-groups/', { params: { query: { limit, offset } } })));
  return groups.map(({ id, name }) => ({ id, name }));
}

/** The IPVS connection sync settings (one object for the cluster). */
export function getIpvsSync(): Promise<IpvsSync> {
  return unwrap(api.GET('/api/v1/ipvs-sync/'));
}

/** Stores the sync settings; the nodes get them with the next applied revision. */
export function saveIpvsSync(body: IpvsSyncRequest): Promise<IpvsSync> {
  return unwrap(api.PUT('/api/v1/ipvs-sync/', { body }));
}

/** Join codes (admins): newest first, never the code itself. */
export function listJoinCodes(): Promise<JoinCode[]> {
  return listAll((limit, offset) => unwrap(api.GET('/api/v1/join-codes/', { params: { query: { limit, offset } } })));
}

/** A new one-time join code; the answer carries the code, which the API never shows again. */
export function createJoinCode(): Promise<JoinCodeCreated> {
  return unwrap(api.POST('/api/v1/join-codes/'));
}

export async function revokeJoinCode(id: number): Promise<void> {
  await unwrap(api.DELETE('/api/v1/join-codes/{id}/', { params: { path: { id } } }));
}

/** How the cluster database replicates: this appliance's role, its standbys and their lag. */
export function getReplication(): Promise<Replication> {
  return unwrap(api.GET('/api/v1/cluster/replication/'));
}

/**
 * Hands the management VIP, and the writable cluster database with it, over to the
 * synchronous standby (admins). Answered once it has started; refused (409, `{detail}`)
 * where no management VIP is held or no standby is synchronous.
 */
export function switchOver(): Promise<Switchover> {
  return unwrap(api.POST('/api/v1/cluster/switchover/'));
}

export const DAEMON_EVENTS_SHOWN = 20;

/** The newest daemon restarts on every node (one page). */
export async function listDaemonEvents(): Promise<{ count: number; results: DaemonEvent[] }> {
  return unwrap(api.GET('/api/v1/daemon-events/', { params: { query: { limit: DAEMON_EVENTS_SHOWN, offset: 0 } } }));
}
