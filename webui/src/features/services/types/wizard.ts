import { z } from 'zod';
import { type Schemas, VALUES } from '@/lib/api';
import { HTTP_PATH_PATTERN, ipAddress, objectName, port } from '@/lib/validation';
import type { Forwarding, Protocol } from './forwarding';
import type { VirtualServiceRequest } from './service';

// The guided "new virtual service": what an operator picks step by step, checked with the
// API's rules before Next, then created as pool → health check → members → service.

export type ServiceKind = 'web' | 'web-https' | 'layer4';
export type WizardStep = 'kind' | 'listener' | 'pool' | 'certificate' | 'review';
export type WizardAlgorithm = Extract<
  Schemas['AlgorithmEnum'],
  'round-robin' | 'weighted-round-robin' | 'least-connections' | 'source-hash' | 'dynamic-least-load'
>;
export type WizardCheckType = 'http' | 'tcp' | 'ping' | 'none';

export const SERVICE_KINDS: readonly { value: ServiceKind; label: string; explain: string }[] = [
  { value: 'web', label: 'Web (HTTP, layer 7)', explain: 'HAProxy answers HTTP on the VIP and spreads requests over the members.' },
  {
    value: 'web-https',
    label: 'Web over HTTPS (TLS offload, layer 7)',
    explain: 'HAProxy ends TLS with a certificate on the balancer and sends plain HTTP to the members.',
  },
  {
    value: 'layer4',
    label: 'TCP/UDP (layer 4: NAT, direct routing, tunnel)',
    explain: 'The kernel (IPVS) forwards packets to the members: any TCP or UDP protocol, at line rate.',
  },
];

export const LAYER4_METHODS: readonly Forwarding[] = ['nat', 'direct-routing', 'tunnel'];

export const WIZARD_ALGORITHMS: readonly { value: WizardAlgorithm; label: string; explain: string }[] = [
  { value: 'round-robin', label: 'Round robin', explain: 'Each member in turn; weights ignored.' },
  { value: 'weighted-round-robin', label: 'Weighted round robin', explain: 'In turn, in proportion to the weights.' },
  { value: 'least-connections', label: 'Weighted least connections', explain: 'The member with the fewest open connections for its weight.' },
  { value: 'source-hash', label: 'Source address hash', explain: 'The same client always reaches the same member while it is up.' },
  {
    value: 'dynamic-least-load',
    label: 'Dynamic least load (DLLC)',
    explain: 'Fewest connections × measured load: every member must run fulcrum-loadd (ports 3333/3334).',
  },
];

export const WIZARD_CHECKS: readonly { value: WizardCheckType; label: string }[] = [
  { value: 'http', label: 'HTTP request' },
  { value: 'tcp', label: 'TCP connect' },
  { value: 'ping', label: 'Ping (ICMP echo)' },
  { value: 'none', label: 'None (members always count as up)' },
];

const KIND_DEFAULTS: Record<ServiceKind, { forwarding: Forwarding; protocol: Protocol; port: number; algorithm: WizardAlgorithm; check: WizardCheckType }> = {
  web: { forwarding: 'proxy', protocol: 'http', port: 80, algorithm: 'round-robin', check: 'http' },
  'web-https': { forwarding: 'proxy', protocol: 'https', port: 443, algorithm: 'round-robin', check: 'http' },
  // Layer 4 has no usual port: the operator says which one.
  layer4: { forwarding: 'nat', protocol: 'tcp', port: Number.NaN, algorithm: 'least-connections', check: 'tcp' },
};

// Loose on purpose: an empty number input reads as NaN, and every rule runs in superRefine,
// which zod skips when the shape itself fails; the messages then come from @/lib/validation.
const typedNumber = z.union([z.number(), z.nan()]);

export const memberRowSchema = z.object({ name: z.string(), address: z.string(), port: typedNumber });
export type WizardMember = z.infer<typeof memberRowSchema>;

const wizardFieldsSchema = z.object({
  kind: z.enum(['web', 'web-https', 'layer4']),
  // listener
  name: z.string(),
  vip: z.string(),
  port: typedNumber,
  forwarding: z.enum(VALUES.forwarding),
  protocol: z.enum(VALUES.protocol),
  // pool
  pool_mode: z.enum(['new', 'existing']),
  existing_pool: z.string(),
  pool_name: z.string(),
  algorithm: z.enum(['round-robin', 'weighted-round-robin', 'least-connections', 'source-hash', 'dynamic-least-load']),
  members: z.array(memberRowSchema),
  check_type: z.enum(['http', 'tcp', 'ping', 'none']),
  check_path: z.string(),
  check_status: typedNumber,
  // certificate (HTTPS)
  certificate_mode: z.enum(['existing', 'generate']),
  certificate: z.string(),
  cert_name: z.string(),
  cert_common_name: z.string(),
});
export type WizardValues = z.infer<typeof wizardFieldsSchema>;

type Issue = (path: (string | number)[], message: string) => void;

/** Adds `schema`'s first message at `path` when `value` breaks it (the shared rules of @/lib/validation). */
function checkWith(schema: z.ZodType, value: unknown, path: (string | number)[], issue: Issue) {
  const result = schema.safeParse(value);
  if (!result.success) issue(path, result.error.issues[0]!.message);
}

function checkListener(values: WizardValues, issue: Issue) {
  checkWith(objectName, values.name, ['name'], issue);
  checkWith(ipAddress, values.vip, ['vip'], issue);
  checkWith(port, values.port, ['port'], issue);
  if (values.kind === 'layer4' && !LAYER4_METHODS.includes(values.forwarding)) issue(['forwarding'], 'Choose NAT, direct routing or tunnel.');
  if (values.kind === 'layer4' && values.protocol !== 'tcp' && values.protocol !== 'udp') issue(['protocol'], 'Layer 4 forwards TCP or UDP.');
}

function checkMembers(values: WizardValues, issue: Issue) {
  if (values.members.length === 0) issue(['members'], 'Add at least one member.');
  const seen = new Set<string>();
  const samePort = values.forwarding === 'direct-routing' || values.forwarding === 'tunnel';
  values.members.forEach((member, index) => {
    checkWith(objectName, member.name, ['members', index, 'name'], issue);
    if (seen.has(member.name.trim())) issue(['members', index, 'name'], 'Another member has this name.');
    seen.add(member.name.trim());
    checkWith(ipAddress, member.address, ['members', index, 'address'], issue);
    checkWith(port, member.port, ['members', index, 'port'], issue);
    // The member answers the client itself, on the VIP's own port (the API refuses others).
    if (samePort && Number.isInteger(values.port) && member.port !== values.port) {
      issue(['members', index, 'port'], `Direct routing and tunnel keep the port: use ${values.port}.`);
    }
  });
}

function checkPool(values: WizardValues, issue: Issue) {
  if (values.pool_mode === 'existing') {
    if (!values.existing_pool) issue(['existing_pool'], 'Choose the pool that serves this virtual service.');
    return;
  }
  checkWith(objectName, values.pool_name, ['pool_name'], issue);
  checkMembers(values, issue);
  if (values.check_type !== 'http') return;
  if (!HTTP_PATH_PATTERN.test(values.check_path.trim())) issue(['check_path'], "An absolute path such as /health (no spaces, quotes, '#', '$' or backslashes).");
  const status = values.check_status;
  if (!Number.isInteger(status) || status < 100 || status > 599) issue(['check_status'], 'The expected status must be between 100 and 599.');
}

function checkCertificate(values: WizardValues, issue: Issue) {
  if (values.kind !== 'web-https') return;
  if (values.certificate_mode === 'existing') {
    if (!values.certificate) issue(['certificate'], 'Choose the certificate the service presents.');
    return;
  }
  checkWith(objectName, values.cert_name, ['cert_name'], issue);
  const cn = values.cert_common_name.trim();
  if (!cn) issue(['cert_common_name'], 'Enter the common name, e.g. www.example.com.');
  else if (cn.length > 64) issue(['cert_common_name'], 'At most 64 characters.');
}

/** Every step's rules; Next validates only the fields of the step it leaves. */
export const wizardSchema = wizardFieldsSchema.superRefine((values, ctx) => {
  const issue: Issue = (path, message) => ctx.addIssue({ code: 'custom', path, message });
  checkListener(values, issue);
  checkPool(values, issue);
  checkCertificate(values, issue);
});

/** The steps for this kind: only HTTPS has a certificate step. */
export function wizardSteps(kind: ServiceKind): WizardStep[] {
  return kind === 'web-https' ? ['kind', 'listener', 'pool', 'certificate', 'review'] : ['kind', 'listener', 'pool', 'review'];
}

export const STEP_TITLES: Record<WizardStep, string> = {
  kind: 'Kind of service',
  listener: 'Listener',
  pool: 'Pool and members',
  certificate: 'Certificate',
  review: 'Review and create',
};

/** The fields a step holds: Next validates them, and a server message on one brings the operator back to it. */
export const STEP_FIELDS: Record<WizardStep, readonly (keyof WizardValues)[]> = {
  kind: ['kind'],
  listener: ['name', 'vip', 'port', 'forwarding', 'protocol'],
  pool: ['pool_mode', 'existing_pool', 'pool_name', 'algorithm', 'members', 'check_type', 'check_path', 'check_status'],
  certificate: ['certificate_mode', 'certificate', 'cert_name', 'cert_common_name'],
  review: [],
};

/** The step holding a form path (`members.2.port` → pool). */
export function stepOfField(path: string): WizardStep | undefined {
  const field = path.split('.')[0];
  return (Object.keys(STEP_FIELDS) as WizardStep[]).find((step) => (STEP_FIELDS[step] as readonly string[]).includes(field ?? ''));
}

/** Every path a server message can land on, member rows included. */
export function wizardFormFields(values: Pick<WizardValues, 'members'>): string[] {
  const steps = Object.values(STEP_FIELDS).flat() as string[];
  const rows = values.members.flatMap((_, i) => [`members.${i}.name`, `members.${i}.address`, `members.${i}.port`]);
  return [...steps, ...rows];
}

export function emptyWizard(certificates = 0): WizardValues {
  const web = KIND_DEFAULTS.web;
  return {
    kind: 'web',
    name: '',
    vip: '',
    port: web.port,
    forwarding: web.forwarding,
    protocol: web.protocol,
    pool_mode: 'new',
    existing_pool: '',
    pool_name: '',
    algorithm: web.algorithm,
    members: [],
    check_type: web.check,
    check_path: '/',
    check_status: 200,
    certificate_mode: certificates > 0 ? 'existing' : 'generate',
    certificate: '',
    cert_name: '',
    cert_common_name: '',
  };
}

const samePort = (a: number, b: number) => a === b || (Number.isNaN(a) && Number.isNaN(b));

/**
 * The values after choosing `kind`: forwarding and protocol follow it, and the port,
 * algorithm and health check too while they still hold the other kind's default.
 */
export function withKind(values: WizardValues, kind: ServiceKind): WizardValues {
  const before = KIND_DEFAULTS[values.kind];
  const after = KIND_DEFAULTS[kind];
  const layer4 = kind === 'layer4';
  const kept = (current: number, old: number, next: number) => (samePort(current, old) ? next : current);
  return {
    ...values,
    kind,
    forwarding: layer4 ? (LAYER4_METHODS.includes(values.forwarding) ? values.forwarding : after.forwarding) : 'proxy',
    protocol: layer4 ? (values.protocol === 'udp' ? 'udp' : 'tcp') : after.protocol,
    port: kept(values.port, before.port, after.port),
    algorithm: values.algorithm === before.algorithm ? after.algorithm : values.algorithm,
    check_type: values.check_type === before.check ? after.check : values.check_type,
  };
}

/** A new member row: the listener's port on layer 4 (direct routing and tunnel require it), else 80. */
export function emptyMember(values: Pick<WizardValues, 'kind' | 'port'>, index: number): WizardMember {
  const memberPort = values.kind === 'layer4' && Number.isInteger(values.port) ? values.port : 80;
  return { name: `s${index + 1}`, address: '', port: memberPort };
}

// --- requests, in the order they are made ------------------------------------------------

export function toWizardCertificateRequest(values: WizardValues): Schemas['CertificateGenerateRequest'] {
  return { name: values.cert_name.trim(), common_name: values.cert_common_name.trim(), key_type: 'ecdsa-p256', days: 365 };
}

export function toWizardPoolRequest(values: WizardValues): Schemas['PoolRequest'] {
  return { name: values.pool_name.trim(), algorithm: values.algorithm };
}

/** null for "None": the pool then has no health check. */
export function toWizardCheckRequest(pool: number, values: WizardValues): Schemas['HealthCheckRequest'] | null {
  switch (values.check_type) {
    case 'none':
      return null;
    case 'http':
      return { pool, type: 'http', method: 'GET', path: values.check_path.trim(), expected_status: values.check_status };
    default:
      return { pool, type: values.check_type };
  }
}

export function toWizardMemberRequests(pool: number, values: WizardValues): Schemas['MemberRequest'][] {
  return values.members.map((member) => ({ pool, name: member.name.trim(), address: member.address.trim(), port: member.port }));
}

export function toWizardServiceRequest(values: WizardValues, pool: number, certificate: number | null): VirtualServiceRequest {
  return {
    name: values.name.trim(),
    vip: values.vip.trim(),
    port: values.port,
    forwarding: values.forwarding,
    protocol: values.protocol,
    default_pool: pool,
    enabled: true,
    ...(values.kind === 'web-https' ? { default_certificate: certificate } : {}),
  };
}

// --- server messages -------------------------------------------------------------------

/** Which call a server message answered: its fields are named by that object, not the wizard. */
export type WizardStage = { call: 'certificate' | 'pool' | 'check' | 'service' } | { call: 'member'; index: number };

const SERVICE_PATHS: Record<string, string> = { name: 'name', vip: 'vip', port: 'port', forwarding: 'forwarding', protocol: 'protocol', default_certificate: 'certificate' };
const CERTIFICATE_PATHS: Record<string, string> = { name: 'cert_name', common_name: 'cert_common_name', sans: 'cert_common_name' };
const CHECK_PATHS: Record<string, string> = { type: 'check_type', path: 'check_path', expected_status: 'check_status', method: 'check_path' };

/** Puts an API path (`port`, `non_field_errors/pools/web/members/s1/port`) on the wizard field it concerns. */
export function translateWizardPath(stage: WizardStage, path: string[], values: WizardValues): string[] {
  const [field = '', ...rest] = path;
  switch (stage.call) {
    case 'certificate':
      return CERTIFICATE_PATHS[field] ? [CERTIFICATE_PATHS[field], ...rest] : path;
    case 'pool':
      return field === 'name' || field === 'algorithm' ? [field === 'name' ? 'pool_name' : 'algorithm', ...rest] : path;
    case 'check':
      return CHECK_PATHS[field] ? [CHECK_PATHS[field], ...rest] : path;
    case 'member':
      return ['name', 'address', 'port'].includes(field) ? ['members', String(stage.index), field, ...rest] : path;
    case 'service': {
      if (field === 'default_pool') return [values.pool_mode === 'existing' ? 'existing_pool' : 'pool_name', ...rest];
      const [, object, , part, member, memberField] = path;
      if (field === 'non_field_errors' && object === 'pools' && part === 'members' && memberField) {
        const row = values.members.findIndex((m) => m.name.trim() === member);
        if (row >= 0) return ['members', String(row), memberField];
      }
      return SERVICE_PATHS[field] ? [SERVICE_PATHS[field], ...rest] : path;
    }
  }
}
