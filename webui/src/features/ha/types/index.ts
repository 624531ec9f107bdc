import { z } from 'zod';
import { PATTERNS, type Schemas } from '@/lib/api';
import { INTERFACE_HELP, INTERFACE_PATTERN, isAddressOrCidr, joinLines, objectName, splitLines, wholeNumber } from '@/lib/validation';

export type HaGroup = Schemas['HaGroup'];
export type HaGroupRequest = Schemas['HaGroupRequest'];
export type HaGroupNode = Schemas['HaGroupNode'];
export type HaEvent = Schemas['HaEvent'];
export type VrrpStatus = Schemas['VrrpStatus'];
/** What the HA page needs to know about a node: its name, HA address, standby and VRRP states. */
export type HaNode = Pick<Schemas['Node'], 'id' | 'name' | 'address' | 'standby' | 'vrrp'>;
/** The role-change timeline's filters: a node's and a group's name, '' for all. */
export type HaEventFilters = { node: string; group: string };

// The API's rules (api/compiler/rules.py), repeated so mistakes show before a round trip.
export const VRID_MIN = 1;
export const VRID_MAX = 255;
export const PRIORITY_MIN = 1;
export const PRIORITY_MAX = 254;
const ADVERT = {
  3: { min: 10, max: 40_950, step: 10, help: 'VRRPv3: 10 to 40950 ms in 10 ms steps (sub-second is fine).', refusal: 'VRRPv3 counts in 10 ms steps, from 10 to 40950 ms.' },
  2: {
    min: 1000,
    max: 255_000,
    step: 1000,
    help: 'VRRPv2: whole seconds, 1000 to 255000 ms.',
    refusal: 'VRRPv2 counts whole seconds, from 1000 to 255000 ms; use version 3 for sub-second adverts.',
  },
} as const;
const PASSWORD_PATTERN = PATTERNS.VRRP_PASSWORD.pattern;
export const PASSWORD_HELP = PATTERNS.VRRP_PASSWORD.help;
const VIPS_MAX = 64;
const TRACK_INTERFACES_MAX = 16;

export type VrrpVersion = keyof typeof ADVERT;
export const VRRP_VERSIONS = [
  { value: '3', label: 'VRRPv3 (sub-second adverts)' },
  { value: '2', label: 'VRRPv2 (whole seconds, optional password)' },
] as const;

export const advertHelp = (version: string) => ADVERT[version === '2' ? 2 : 3].help;

// --- form ---

const nodeRowSchema = z.object({
  node: z.string().min(1, 'Choose a node.'),
  priority: wholeNumber('priority', PRIORITY_MIN, PRIORITY_MAX),
  interface: z.string().trim().refine((name) => name === '' || INTERFACE_PATTERN.test(name), INTERFACE_HELP),
});

const optionalAddress = z
  .string()
  .trim()
  .refine((value) => value === '' || z.ipv4().safeParse(value).success || z.ipv6().safeParse(value).success, 'An IPv4 or IPv6 address, or empty for none.');

const family = (vip: string) => (vip.includes(':') ? 6 : 4);

export const haGroupFormSchema = z
  .object({
    name: objectName,
    vrid: wholeNumber('VRID', VRID_MIN, VRID_MAX),
    interface: z.string().trim().regex(INTERFACE_PATTERN, INTERFACE_HELP),
    vips: z.string(),
    vrrp_version: z.enum(['2', '3']),
    advert_interval_ms: z.number({ error: 'Enter the advert interval.' }).int('The advert interval must be a whole number of ms.'),
    preempt: z.boolean(),
    preempt_delay_s: wholeNumber('preempt delay', 0, 1000),
    auth_password: z.string(),
    clear_password: z.boolean(),
    track_haproxy: z.boolean(),
    track_interfaces: z.string(),
    witness: optionalAddress,
    garp_refresh_s: wholeNumber('refresh interval', 0, 86_400),
    garp_repeat: wholeNumber('repeat count', 1, 100),
    nodes: z.array(nodeRowSchema).min(1, 'Add at least one node.').max(32, 'At most 32 nodes.'),
  })
  .superRefine((group, ctx) => {
    const issue = (path: (string | number)[], message: string) => ctx.addIssue({ code: 'custom', path, message });
    const advert = ADVERT[group.vrrp_version === '2' ? 2 : 3];
    const ms = group.advert_interval_ms;
    if (Number.isInteger(ms) && (ms < advert.min || ms > advert.max || ms % advert.step)) issue(['advert_interval_ms'], `${ms} ms: ${advert.refusal}`);
    if (group.preempt_delay_s > 0 && !group.preempt) issue(['preempt_delay_s'], 'A delay only applies when preempt is on.');
    if (group.vrrp_version === '2' && group.auth_password && !PASSWORD_PATTERN.test(group.auth_password)) issue(['auth_password'], PASSWORD_HELP);
    vipIssues(splitLines(group.vips)).forEach((message) => issue(['vips'], message));
    const tracked = splitLines(group.track_interfaces);
    const badTrack = tracked.findIndex((name) => !INTERFACE_PATTERN.test(name));
    if (badTrack >= 0) issue(['track_interfaces'], `Entry ${badTrack + 1}: ${INTERFACE_HELP}`);
    if (tracked.length > TRACK_INTERFACES_MAX) issue(['track_interfaces'], `At most ${TRACK_INTERFACES_MAX}.`);
    nodeRowIssues(group.nodes).forEach(({ path, message }) => issue(path, message));
  });
export type HaGroupFormValues = z.infer<typeof haGroupFormSchema>;
export type HaGroupNodeRow = HaGroupFormValues['nodes'][number];

function vipIssues(vips: string[]): string[] {
  if (vips.length === 0) return ['Enter at least one VIP.'];
  const bad = vips.findIndex((vip) => !isAddressOrCidr(vip));
  if (bad >= 0) return [`Entry ${bad + 1}: not an address or address/prefix: '${vips[bad]}'`];
  if (vips.length > VIPS_MAX) return [`At most ${VIPS_MAX}.`];
  const duplicate = vips.findIndex((vip, i) => vips.findIndex((other) => other.split('/')[0] === vip.split('/')[0]) !== i);
  if (duplicate >= 0) return [`Entry ${duplicate + 1}: listed twice.`];
  if (new Set(vips.map(family)).size > 1) return ['IPv4 and IPv6 VIPs need separate groups (one VRRP instance per family).'];
  return [];
}

/** Each node once, each with its own priority (VRRP elects by priority; a tie is decided by address). */
function nodeRowIssues(rows: readonly HaGroupNodeRow[]): { path: (string | number)[]; message: string }[] {
  const issues: { path: (string | number)[]; message: string }[] = [];
  rows.forEach((row, i) => {
    const first = rows.findIndex((other) => other.node === row.node);
    if (row.node && first < i) issues.push({ path: ['nodes', i, 'node'], message: `Already in row ${first + 1}.` });
    const same = rows.findIndex((other) => other.priority === row.priority);
    if (Number.isInteger(row.priority) && same < i) issues.push({ path: ['nodes', i, 'priority'], message: `Same as row ${same + 1}: give each node its own priority.` });
  });
  return issues;
}

type NodeRowField = `nodes.${number}.${'node' | 'priority' | 'interface'}`;
export type HaGroupFormField = Exclude<keyof HaGroupFormValues, 'clear_password'> | NodeRowField;

/** The fields the form shows for these values (the password only for VRRPv2). */
export function haGroupFormFields(values: Pick<HaGroupFormValues, 'vrrp_version' | 'nodes'>): HaGroupFormField[] {
  const rows = values.nodes.flatMap((_row, i): NodeRowField[] => [`nodes.${i}.node`, `nodes.${i}.priority`, `nodes.${i}.interface`]);
  return [
    'name', 'vrid', 'interface', 'vips', 'vrrp_version', 'advert_interval_ms', 'preempt', 'preempt_delay_s',
    ...(values.vrrp_version === '2' ? (['auth_password'] as const) : []),
    'track_haproxy', 'track_interfaces', 'witness', 'garp_refresh_s', 'garp_repeat', 'nodes', ...rows,
  ];
}

/**
 * The compiler names a group's node by its name (`nodes/lb2/priority: ...`) and a node's own
 * settings as another object (`nodes/lb2/address: needed: ...`); the form has rows by position.
 */
export function translateHaGroupPath(path: string[], values: HaGroupFormValues, nodes: readonly HaNode[]): string[] {
  const rowOf = (name: string | undefined) => {
    const id = nodes.find((node) => node.name === name)?.id;
    return id === undefined ? -1 : values.nodes.map((row) => row.node).lastIndexOf(String(id));
  };
  const [field, key, ...rest] = path;
  if (field === 'nodes' && key !== undefined && !/^\d+$/.test(key)) {
    const row = rowOf(key);
    if (row >= 0) return rest.length ? ['nodes', String(row), ...rest] : ['nodes', String(row), 'node'];
  }
  if (field === 'non_field_errors' && key === 'nodes' && rest.length >= 2) {
    const [name, ...setting] = rest as [string, ...string[]];
    const row = rowOf(name);
    if (row >= 0) return ['nodes', String(row), 'node', `${name}'s ${setting.join(' ')}`];
  }
  return path;
}

export function emptyHaGroupForm(): HaGroupFormValues {
  return {
    name: '', vrid: Number.NaN, interface: 'eth0', vips: '', vrrp_version: '3', advert_interval_ms: 1000, preempt: true, preempt_delay_s: 0,
    auth_password: '', clear_password: false, track_haproxy: true, track_interfaces: '', witness: '', garp_refresh_s: 60, garp_repeat: 3,
    nodes: [emptyNodeRow()],
  };
}

export function emptyNodeRow(priority = 100): HaGroupNodeRow {
  return { node: '', priority, interface: '' };
}

export function toHaGroupForm(group: HaGroup): HaGroupFormValues {
  return {
    name: group.name,
    vrid: group.vrid,
    interface: group.interface ?? 'eth0',
    vips: joinLines(group.vips),
    vrrp_version: group.vrrp_version === 2 ? '2' : '3',
    advert_interval_ms: group.advert_interval_ms ?? 1000,
    preempt: group.preempt ?? true,
    preempt_delay_s: group.preempt_delay_s ?? 0,
    auth_password: '',
    clear_password: false,
    track_haproxy: group.track_haproxy ?? true,
    track_interfaces: joinLines(group.track_interfaces),
    witness: group.witness ?? '',
    garp_refresh_s: group.garp_refresh_s ?? 60,
    garp_repeat: group.garp_repeat ?? 3,
    nodes: group.nodes.map((n) => ({ node: String(n.node), priority: n.priority, interface: n.interface ?? '' })),
  };
}

/**
 * The group for the API. The password is write-only: an empty field keeps the stored one
 * (it is left out), "remove" or VRRPv3 (which has none) send it empty.
 */
export function toHaGroupRequest(values: HaGroupFormValues): HaGroupRequest {
  const { clear_password, auth_password, vrrp_version, vips, track_interfaces, witness, nodes, ...rest } = values;
  const v2 = vrrp_version === '2';
  const password = !v2 || clear_password ? { auth_password: '' } : auth_password ? { auth_password } : {};
  return {
    ...rest,
    vrrp_version: v2 ? 2 : 3,
    ...password,
    vips: splitLines(vips),
    track_interfaces: splitLines(track_interfaces),
    witness: witness || null,
    nodes: nodes.map((row) => ({ node: Number(row.node), priority: row.priority, interface: row.interface })),
  };
}

// --- active/active ---

/** The same nodes with the priorities reversed: whoever was the group's master is the mirror's last choice. */
export function mirroredNodes(nodes: readonly HaGroupNode[]): HaGroupNode[] {
  const byPriority = [...nodes].sort((a, b) => b.priority - a.priority);
  const ascending = byPriority.map((n) => n.priority).reverse();
  return byPriority.map((n, i) => ({ node: n.node, priority: ascending[i]!, interface: n.interface ?? '' }));
}

/** The first VRID above `vrid` that no group uses (wrapping round), or NaN when all are taken. */
export function nextFreeVrid(vrid: number, groups: readonly Pick<HaGroup, 'vrid'>[]): number {
  const used = new Set(groups.map((g) => g.vrid));
  for (let step = 1; step < VRID_MAX; step += 1) {
    const candidate = ((vrid - VRID_MIN + step) % VRID_MAX) + VRID_MIN;
    if (!used.has(candidate)) return candidate;
  }
  return Number.NaN;
}

/**
 * A new group for active/active beside `group`: the same nodes and settings, mirrored
 * priorities, the next free VRID and no VIPs yet (the operator moves some over).
 */
export function mirrorHaGroupForm(group: HaGroup, groups: readonly HaGroup[]): HaGroupFormValues {
  const names = new Set(groups.map((g) => g.name));
  const base = `${group.name.slice(0, 56)}-mirror`;
  let name = base;
  for (let n = 2; names.has(name); n += 1) name = `${base}${n}`;
  return {
    ...toHaGroupForm({ ...group, nodes: mirroredNodes(group.nodes) }),
    name,
    vrid: nextFreeVrid(group.vrid, groups),
    vips: '',
  };
}

// --- reading a group ---

/** "1000 ms", "200 ms", "3 s". */
export function formatAdvert(ms: number | undefined): string {
  const value = ms ?? 1000;
  return value >= 1000 && value % 1000 === 0 ? `${value / 1000} s` : `${value} ms`;
}

export function describePreempt(group: Pick<HaGroup, 'preempt' | 'preempt_delay_s'>): string {
  if (!(group.preempt ?? true)) return 'no';
  return group.preempt_delay_s ? `after ${group.preempt_delay_s} s` : 'yes';
}

/** The node's VRRP state in `group` (by name), as its agent last reported it; undefined when it has not. */
export function vrrpOf(node: HaNode | undefined, group: string): VrrpStatus | undefined {
  return node?.vrrp.find((entry) => entry.group === group);
}
