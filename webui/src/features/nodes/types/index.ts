import { z } from 'zod';
import type { Schemas } from '@/lib/api';
import { INTERFACE_HELP, INTERFACE_PATTERN, isMulticast, objectName, port, wholeNumber } from '@/lib/validation';

export type Node = Schemas['Node'];
export type NodeCreated = Schemas['NodeCreate'];
/** One IPVS service as the node's agent last saw it: the scheduler wanted and the one in force. */
export type IpvsStatus = Schemas['IpvsStatusRequest'];
export type IpvsSync = Schemas['IpvsSync'];
export type IpvsSyncRequest = Schemas['IpvsSyncRequest'];
export type NodeStandbyResult = Schemas['NodeStandbyResult'];
export type VrrpStatus = Schemas['VrrpStatus'];
export type JoinCode = Schemas['JoinCode'];
export type JoinCodeCreated = Schemas['JoinCodeCreated'];
export type Replication = Schemas['Replication'];
export type Standby = Schemas['Standby'];
export type Switchover = Schemas['Switchover'];
/** HAProxy or keepalived found stopped by a node's agent, and started again (or not). */
export type DaemonEvent = Schemas['DaemonEvent'];
/** What the Nodes page needs of the newest revision: its number and whether every node runs it. */
export type NewestRevision = Pick<Schemas['Revision'], 'number' | 'live'>;
/** An HA group as the IPVS sync settings offer it. */
export type HaGroupChoice = Pick<Schemas['HaGroup'], 'id' | 'name'>;

export const nodeFormSchema = z.object({ name: objectName });
export type NodeFormValues = z.infer<typeof nodeFormSchema>;
export const NODE_FORM_FIELDS = ['name'] as const;

// --- HA address, VRRP states, configuration sync ---

export const nodeAddressFormSchema = z.object({
  address: z
    .string()
    .trim()
    .refine((value) => value === '' || z.ipv4().safeParse(value).success || z.ipv6().safeParse(value).success, 'An IPv4 or IPv6 address, or empty for none.'),
});
export type NodeAddressFormValues = z.infer<typeof nodeAddressFormSchema>;
export const NODE_ADDRESS_FORM_FIELDS = ['address'] as const;

/** The node's VRRP state per HA group, by group name. */
export function nodeVrrp(node: Pick<Node, 'vrrp'>): VrrpStatus[] {
  return [...(node.vrrp ?? [])].sort((a, b) => a.group.localeCompare(b.group));
}

/** Whether the node runs the newest revision: 'current', 'behind' (or never applied), or 'unknown' before any apply. */
export function configSync(node: Pick<Node, 'applied_revision'>, newest: NewestRevision | null | undefined): 'current' | 'behind' | 'unknown' {
  if (!newest) return 'unknown';
  return node.applied_revision === newest.number ? 'current' : 'behind';
}

/** "Newest revision 14 runs on every node." / "... lb2 runs 12, lb3 none." */
export function describeConfigSync(nodes: readonly Pick<Node, 'name' | 'applied_revision'>[], newest: NewestRevision): string {
  const behind = nodes.filter((node) => configSync(node, newest) === 'behind');
  if (behind.length === 0) return `Newest revision #${newest.number} runs on every node.`;
  const runs = behind.map((node) => `${node.name} runs ${node.applied_revision ? `#${node.applied_revision}` : 'none'}`);
  return `Newest revision #${newest.number}: ${runs.join(', ')}.`;
}

// The schema types a node's reported networks and IPVS status as free JSON (`unknown`):
// read them defensively, with the shape the agent posts them in.
const networksSchema = z.array(z.string());
const ipvsStatusSchema = z.array(
  z.object({
    key: z.string(),
    name: z.string().default(''),
    scheduler_wanted: z.string(),
    scheduler_in_force: z.string(),
    message: z.string().default(''),
  }),
) satisfies z.ZodType<IpvsStatus[], unknown>;

/** The node's interface networks (CIDR) from its agent's last status report. */
export function nodeNetworks(node: Pick<Node, 'networks'>): string[] {
  const parsed = networksSchema.safeParse(node.networks);
  return parsed.success ? parsed.data : [];
}

/** Per IPVS service, the scheduler wanted and the one the kernel runs. */
export function nodeSchedulers(node: Pick<Node, 'ipvs_status'>): IpvsStatus[] {
  const parsed = ipvsStatusSchema.safeParse(node.ipvs_status);
  return parsed.success ? parsed.data : [];
}

export const schedulerDiffers = (status: IpvsStatus) => status.scheduler_wanted !== status.scheduler_in_force;

// --- IPVS connection sync ---

export const ipvsSyncFormSchema = z.object({
  enabled: z.boolean(),
  interface: z.string().trim().regex(INTERFACE_PATTERN, INTERFACE_HELP),
  sync_id: wholeNumber('sync ID', 0, 255),
  port,
  ttl: wholeNumber('TTL', 1, 255),
  max_packet: wholeNumber('largest message', 0, 65_507),
  group: z
    .string()
    .trim()
    .refine((group) => group === '' || isMulticast(group), 'A multicast address such as 224.0.0.81, or empty for it.'),
  /** An HA group's id, '' for none. */
  ha_group: z.string(),
});
export type IpvsSyncFormValues = z.infer<typeof ipvsSyncFormSchema>;
export const IPVS_SYNC_FORM_FIELDS = ['enabled', 'interface', 'sync_id', 'port', 'ttl', 'max_packet', 'group', 'ha_group'] as const;

export function toIpvsSyncForm(sync: IpvsSync): IpvsSyncFormValues {
  return {
    enabled: sync.enabled ?? false,
    interface: sync.interface ?? 'eth0',
    sync_id: sync.sync_id ?? 0,
    port: sync.port ?? 8848,
    ttl: sync.ttl ?? 1,
    max_packet: sync.max_packet ?? 0,
    group: sync.group ?? '',
    ha_group: sync.ha_group == null ? '' : String(sync.ha_group),
  };
}

/**
 * The settings for a PUT; no group is sent as null (the API stores no address, meaning
 * 224.0.0.81), and no HA group as null (both daemons on every node).
 */
export function toIpvsSyncRequest(values: IpvsSyncFormValues): IpvsSyncRequest {
  return { ...values, group: values.group || null, ha_group: values.ha_group ? Number(values.ha_group) : null };
}
