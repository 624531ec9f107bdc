import { z } from 'zod';
import { CHOICES, type Schemas, VALUES } from '@/lib/api';
import {
  CHECK_SCRIPT_HELP,
  CHECK_SCRIPT_PATTERN,
  description,
  DIGEST_HELP,
  DIGEST_PATTERN,
  DNS_NAME_PATTERN,
  FIELD_NAME_HELP,
  FIELD_NAME_PATTERN,
  HOST_PATTERN,
  HTTP_PATH_PATTERN,
  ipAddress,
  objectName,
  port,
  SNI_PATTERN,
  TEXT_HELP,
  TEXT_PATTERN,
  timeoutMs,
  weight,
  wholeNumber,
} from '@/lib/validation';
import { choicesFor, type LayerChoice, layerChoices, type PoolLayer } from './layer';

export * from './layer';

export type Pool = Schemas['Pool'];
export type PoolRequest = Schemas['PoolRequest'];
export type Member = Schemas['Member'];
export type MemberRequest = Schemas['MemberRequest'];
export type MemberState = Schemas['MemberStateEnum'];
export type HealthCheck = Schemas['HealthCheck'];
export type HealthCheckRequest = Schemas['HealthCheckRequest'];
export type Algorithm = Schemas['AlgorithmEnum'];

export const ALGORITHMS: readonly LayerChoice<Algorithm>[] = layerChoices(CHOICES.algorithm);

/** DLLC reads each member's load from fulcrum-loadd, which must run on every member. */
export const usesFeedback = (algorithm: Algorithm) => algorithm === 'dynamic-least-load';

/** The algorithms that hash the client: IPVS can hash its port too and fall back when the member is out. */
export const HASH_ALGORITHMS: readonly Algorithm[] = ['source-hash', 'maglev-hash'];

export const ON_FAILURE = CHOICES.on_failure;

export const algorithmChoices = (layer: PoolLayer) => choicesFor(ALGORITHMS, layer);

// The console's short words for each of the catalogue's member states (a state added there
// does not compile here until it has them).
const MEMBER_STATE_WORDS: Record<MemberState, { label: string; action: string }> = {
  enabled: { label: 'Enabled', action: 'Enable' },
  drain: { label: 'Draining', action: 'Drain' },
  disabled: { label: 'Disabled', action: 'Disable' },
};

export const MEMBER_STATES: readonly { value: MemberState; label: string; action: string }[] = CHOICES.member_state.map(({ value }) => ({
  value,
  ...MEMBER_STATE_WORDS[value],
}));

export function algorithmLabel(value: Algorithm | undefined): string {
  return ALGORITHMS.find((a) => a.value === value)?.label ?? value ?? 'round robin';
}

// --- pool ---

export type PersistenceType = Schemas['PersistenceTypeEnum'];
/** What the pool form needs to know about a certificate to offer it as a CA. */
export type CertificateChoice = Pick<Schemas['Certificate'], 'id' | 'name' | 'is_ca'>;

export const PERSISTENCE_TYPES: readonly LayerChoice<PersistenceType>[] = layerChoices(CHOICES.persistence_type);

/** IPVS persists by source address only; HAProxy has every type. The order stays as listed. */
export function persistenceChoices(layer: PoolLayer) {
  const types = layer === 'ipvs' ? PERSISTENCE_TYPES.filter((t) => !t.only) : PERSISTENCE_TYPES;
  return types.map(({ value, label }) => ({ value, label }));
}

/** The persistence settings each type uses (compiler render._persistence and the template). */
export const PERSISTENCE_FIELDS: Record<PersistenceType, readonly (keyof PoolFormValues['persistence'])[]> = {
  none: [],
  cookie_insert: ['cookie_name', 'indirect', 'nocache', 'httponly', 'secure', 'max_idle_s', 'max_life_s'],
  cookie_rewrite: ['cookie_name'],
  cookie_prefix: ['cookie_name'],
  app_cookie: ['cookie_name', 'timeout_s', 'table_size'],
  source: ['ipv4_mask', 'ipv6_mask', 'timeout_s', 'table_size'],
  ssl_session_id: ['timeout_s', 'table_size', 'fallback_source'],
  header: ['header_name', 'timeout_s', 'table_size'],
};

export const HTTP_REUSE = CHOICES.http_reuse;

export const PROXY_PROTOCOLS = CHOICES.proxy_protocol;

/** The persistence settings a type uses on this layer: IPVS keeps no sized table. */
export function persistenceFields(type: PersistenceType, layer: PoolLayer): readonly (keyof PoolFormValues['persistence'])[] {
  return layer === 'ipvs' ? PERSISTENCE_FIELDS[type].filter((field) => field !== 'table_size') : PERSISTENCE_FIELDS[type];
}

const persistenceTimeout = (label: string, min: number) => wholeNumber(label, min, 30 * 86_400);

const persistenceSchema = z
  .object({
    type: z.enum(VALUES.persistence_type),
    cookie_name: z.string().trim(),
    indirect: z.boolean(),
    nocache: z.boolean(),
    httponly: z.boolean(),
    secure: z.boolean(),
    max_idle_s: persistenceTimeout('idle limit', 0),
    max_life_s: persistenceTimeout('lifetime', 0),
    header_name: z.string().trim(),
    timeout_s: persistenceTimeout('expiry', 1),
    ipv4_mask: wholeNumber('IPv4 mask', 1, 32),
    ipv6_mask: wholeNumber('IPv6 mask', 1, 128),
    table_size: wholeNumber('table size', 1, 10_000_000),
    fallback_source: z.boolean(),
  })
  .superRefine((p, ctx) => {
    const uses = PERSISTENCE_FIELDS[p.type];
    if (uses.includes('cookie_name') && !FIELD_NAME_PATTERN.test(p.cookie_name)) {
      ctx.addIssue({ code: 'custom', path: ['cookie_name'], message: p.cookie_name ? FIELD_NAME_HELP : 'Enter the cookie name.' });
    }
    if (uses.includes('header_name') && !FIELD_NAME_PATTERN.test(p.header_name)) {
      ctx.addIssue({ code: 'custom', path: ['header_name'], message: p.header_name ? FIELD_NAME_HELP : 'Enter the header name.' });
    }
  });

export const poolFormSchema = z
  .object({
    name: objectName,
    algorithm: z.enum(VALUES.algorithm),
    description,
    persistence: persistenceSchema,
    http_reuse: z.enum(VALUES.http_reuse),
    pool_max_conn: wholeNumber('idle connection limit', -1, 1_000_000),
    pool_purge_delay_ms: wholeNumber('purge delay', 0, 86_400_000),
    tls: z.boolean(),
    tls_verify: z.boolean(),
    tls_ca: z.string(),
    tls_sni: z.string().trim().refine((sni) => sni === '' || SNI_PATTERN.test(sni), 'A host name, @host, or empty.'),
    proxy_protocol: z.enum(VALUES.proxy_protocol),
    connect_timeout_ms: timeoutMs('connect timeout'),
    server_timeout_ms: timeoutMs('server timeout'),
    queue_timeout_ms: timeoutMs('queue timeout'),
    maintenance_page: z.string().max(15_360, 'At most 15360 characters.'),
    hash_port: z.boolean(),
    hash_fallback: z.boolean(),
    on_failure: z.enum(VALUES.on_failure),
    feedback_agent_port: wholeNumber('agent port', 1, 65_535),
    feedback_http_port: wholeNumber('load port', 1, 65_535),
    feedback_interval_ms: wholeNumber('agent interval', 100, 3_600_000),
  })
  .superRefine((pool, ctx) => {
    if (pool.tls && pool.tls_verify && !pool.tls_ca) {
      ctx.addIssue({ code: 'custom', path: ['tls_ca'], message: "Choose the CA bundle that verifies the members' certificates." });
    }
  });
export type PoolFormValues = z.infer<typeof poolFormSchema>;
type PersistenceField = `persistence.${keyof PoolFormValues['persistence']}`;
export type PoolFormField = keyof PoolFormValues | PersistenceField;

const POOL_FIELDS = ['name', 'algorithm', 'description', 'persistence', 'persistence.type'] as const;
const PROXY_POOL_FIELDS = [
  'http_reuse', 'pool_max_conn', 'pool_purge_delay_ms', 'tls', 'proxy_protocol', 'connect_timeout_ms', 'server_timeout_ms', 'queue_timeout_ms',
  'maintenance_page',
] as const;

type ShownBy = Pick<PoolFormValues, 'algorithm' | 'persistence' | 'tls' | 'tls_verify'>;

/** The fields the pool form shows for these values on this layer. */
export function poolFormFields(values: ShownBy, layer: PoolLayer = 'unknown'): PoolFormField[] {
  const persistence = persistenceFields(values.persistence.type, layer).map((field): PersistenceField => `persistence.${field}`);
  const proxy: PoolFormField[] = layer === 'ipvs' ? [] : [...PROXY_POOL_FIELDS];
  const tls: PoolFormField[] = layer !== 'ipvs' && values.tls ? ['tls_verify', 'tls_sni', ...(values.tls_verify ? (['tls_ca'] as const) : [])] : [];
  const ipvs: PoolFormField[] = layer === 'proxy' ? [] : ['on_failure', ...(usesHashOptions(values.algorithm) ? (['hash_port', 'hash_fallback'] as const) : [])];
  const feedback: PoolFormField[] = !usesFeedback(values.algorithm)
    ? []
    : ['feedback_http_port', ...(layer === 'ipvs' ? [] : (['feedback_agent_port', 'feedback_interval_ms'] as const))];
  return [...POOL_FIELDS, ...persistence, ...proxy, ...tls, ...ipvs, ...feedback];
}

export const usesHashOptions = (algorithm: Algorithm) => HASH_ALGORITHMS.includes(algorithm);

export function toPoolForm(pool?: Pool): PoolFormValues {
  const p = pool?.persistence;
  return {
    name: pool?.name ?? '',
    algorithm: pool?.algorithm ?? 'round-robin',
    description: pool?.description ?? '',
    persistence: {
      type: p?.type ?? 'none',
      cookie_name: p?.cookie_name ?? 'SERVERID',
      indirect: p?.indirect ?? true,
      nocache: p?.nocache ?? true,
      httponly: p?.httponly ?? true,
      secure: p?.secure ?? false,
      max_idle_s: p?.max_idle_s ?? 0,
      max_life_s: p?.max_life_s ?? 0,
      header_name: p?.header_name ?? '',
      timeout_s: p?.timeout_s ?? 1800,
      ipv4_mask: p?.ipv4_mask ?? 32,
      ipv6_mask: p?.ipv6_mask ?? 128,
      table_size: p?.table_size ?? 100_000,
      fallback_source: p?.fallback_source ?? false,
    },
    http_reuse: pool?.http_reuse ?? 'always',
    pool_max_conn: pool?.pool_max_conn ?? -1,
    pool_purge_delay_ms: pool?.pool_purge_delay_ms ?? 5000,
    tls: pool?.tls ?? false,
    tls_verify: pool?.tls_verify ?? true,
    tls_ca: pool?.tls_ca == null ? '' : String(pool.tls_ca),
    tls_sni: pool?.tls_sni ?? '',
    proxy_protocol: pool?.proxy_protocol ?? 'none',
    connect_timeout_ms: pool?.connect_timeout_ms ?? 5000,
    server_timeout_ms: pool?.server_timeout_ms ?? 30_000,
    queue_timeout_ms: pool?.queue_timeout_ms ?? 30_000,
    maintenance_page: pool?.maintenance_page ?? '',
    hash_port: pool?.hash_port ?? false,
    hash_fallback: pool?.hash_fallback ?? false,
    on_failure: pool?.on_failure ?? 'remove',
    feedback_agent_port: pool?.feedback_agent_port ?? 3333,
    feedback_http_port: pool?.feedback_http_port ?? 3334,
    feedback_interval_ms: pool?.feedback_interval_ms ?? 1000,
  };
}

/**
 * The pool for a PUT; the CA is sent only when members' certificates are verified. What the
 * layer does not use is sent off: HAProxy's re-encryption, PROXY protocol and maintenance
 * page for IPVS, and IPVS's hashing options and quiescing for HAProxy.
 */
export function toPoolRequest(values: PoolFormValues, layer: PoolLayer = 'unknown'): PoolRequest {
  const ipvs = layer === 'ipvs';
  const tls = !ipvs && values.tls;
  const hashing = layer !== 'proxy' && usesHashOptions(values.algorithm);
  return {
    ...values,
    tls,
    tls_ca: tls && values.tls_verify && values.tls_ca ? Number(values.tls_ca) : null,
    proxy_protocol: ipvs ? 'none' : values.proxy_protocol,
    maintenance_page: ipvs ? '' : values.maintenance_page,
    hash_port: hashing && values.hash_port,
    hash_fallback: hashing && values.hash_fallback,
    on_failure: layer === 'proxy' ? 'remove' : values.on_failure,
  };
}

// --- member ---

const memberLimit = (label: string) => wholeNumber(label, 0, 1_000_000);

export type MemberForwarding = Schemas['MemberForwardingEnum'] | '';

export const MEMBER_FORWARDING: readonly { value: MemberForwarding; label: string }[] = [
  { value: '', label: "The service's method" },
  { value: 'nat', label: 'NAT' },
  { value: 'direct-routing', label: 'Direct routing' },
  { value: 'tunnel', label: 'IP-in-IP tunnel' },
];

export const memberFormSchema = z
  .object({
    name: objectName,
    address: ipAddress,
    port,
    weight,
    state: z.enum(VALUES.member_state),
    backup: z.boolean(),
    max_connections: memberLimit('connection limit'),
    max_queue: memberLimit('queue limit'),
    slowstart_ms: wholeNumber('slow start', 0, 86_400_000),
    min_connections: memberLimit('lower connection threshold'),
    forwarding: z.enum(['', 'nat', 'direct-routing', 'tunnel']),
    loopback: z.boolean(),
  })
  .superRefine((member, ctx) => {
    if (isLoopback(member.address) && !member.loopback) {
      ctx.addIssue({ code: 'custom', path: ['address'], message: 'A loopback address reaches each node itself: tick "On the node" if it is meant to.' });
    } else if (member.loopback && !isLoopback(member.address)) {
      ctx.addIssue({ code: 'custom', path: ['loopback'], message: 'Only for a loopback address (127.0.0.0/8, ::1).' });
    }
    if (member.min_connections && member.min_connections >= (member.max_connections || 1)) {
      ctx.addIssue({ code: 'custom', path: ['min_connections'], message: 'Needs Max connections above it.' });
    }
  });
export type MemberFormValues = z.infer<typeof memberFormSchema>;
type MemberFormField = keyof MemberFormValues;

const MEMBER_FIELDS = ['name', 'address', 'port', 'weight', 'state', 'backup', 'loopback', 'max_connections'] as const;

/** 127.0.0.0/8 or ::1 (as the API judges it; it has the last word). */
export function isLoopback(address: string): boolean {
  const value = address.trim().toLowerCase();
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(value) || /^(0{0,4}:){2,7}0{0,3}1$/.test(value) || value === '::1';
}

/** The member fields a pool of this layer shows: IPVS has thresholds and per-member methods, HAProxy queues and slow start. */
export function memberFormFields(layer: PoolLayer = 'unknown'): MemberFormField[] {
  const proxy: MemberFormField[] = layer === 'ipvs' ? [] : ['max_queue', 'slowstart_ms'];
  const ipvs: MemberFormField[] = layer === 'proxy' ? [] : ['min_connections', 'forwarding'];
  return [...MEMBER_FIELDS, ...proxy, ...ipvs];
}

export function toMemberForm(member?: Member): MemberFormValues {
  return {
    name: member?.name ?? '',
    address: member?.address ?? '',
    port: member?.port ?? 80,
    weight: member?.weight ?? 1,
    state: member?.state ?? 'enabled',
    backup: member?.backup ?? false,
    max_connections: member?.max_connections ?? 0,
    max_queue: member?.max_queue ?? 0,
    slowstart_ms: member?.slowstart_ms ?? 0,
    min_connections: member?.min_connections ?? 0,
    forwarding: member?.forwarding ?? '',
    loopback: member?.loopback ?? false,
  };
}

/** The member for a PUT, with what its pool's layer does not use sent off (the API refuses it). */
export function toMemberRequest(pool: number, values: MemberFormValues, layer: PoolLayer = 'unknown'): MemberRequest {
  const request = { pool, ...values };
  if (layer === 'ipvs') return { ...request, max_queue: 0, slowstart_ms: 0 };
  if (layer === 'proxy') return { ...request, min_connections: 0, forwarding: '' };
  return request;
}

/** A change made to a live member at once (HAProxy's runtime API), without applying. */
export type MemberRuntimeChange = Schemas['MemberRuntimeRequest'];
export type MemberRuntimeResult = Schemas['MemberRuntimeResult'];

// --- health check ---

export type CheckType = Schemas['HealthCheckTypeEnum'];

export const CHECK_TYPES: readonly LayerChoice<CheckType>[] = layerChoices(CHOICES.check_type);
export const CHECK_METHODS = ['GET', 'HEAD', 'OPTIONS', 'POST'] as const;
export const DNS_TYPES = ['A', 'AAAA', 'CNAME', 'MX', 'NS', 'SOA', 'TXT'] as const;

export const checkTypeChoices = (layer: PoolLayer) => choicesFor(CHECK_TYPES, layer);

export const BODY_MATCH: readonly LayerChoice<Schemas['ExpectBodyMatchEnum']>[] = [
  { value: 'string', label: 'contains' },
  { value: 'regex', label: 'matches regex' },
  { value: 'digest', label: 'MD5 digest is (layer 4)', only: 'ipvs' },
];

/** Body matches for this layer, flat: the layer-4 one says so in its label. */
export const bodyMatchChoices = (layer: PoolLayer) =>
  BODY_MATCH.filter((choice) => !choice.only || layer !== 'proxy').map(({ value, label }) => ({ value, label }));

export const isHttpCheck = (type: CheckType) => type === 'http' || type === 'https';

const intervalMs = (label: string) => wholeNumber(label, 100, 3_600_000);

export const healthCheckFormSchema = z
  .object({
    type: z.enum(VALUES.check_type),
    method: z.enum(CHECK_METHODS),
    path: z.string().trim(),
    expected_status: z.number({ error: 'Enter the expected status.' }),
    host: z.string().trim().max(253, 'At most 253 characters.'),
    expect_body: z.string(),
    expect_body_match: z.enum(['string', 'regex', 'digest']),
    agent_port: z.number({ error: 'Enter the agent port.' }),
    interval_ms: intervalMs('interval'),
    timeout_ms: intervalMs('timeout'),
    rise: wholeNumber('rise count', 1, 100),
    fall: wholeNumber('fall count', 1, 100),
    retry_interval_ms: wholeNumber('retry delay', 0, 3_600_000),
    alpha: z.boolean(),
    omega: z.boolean(),
    dns_type: z.enum(DNS_TYPES),
    dns_name: z.string().trim(),
    script: z.string().trim(),
    script_dynamic: z.boolean(),
  })
  .superRefine((values, ctx) => {
    const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
    if (values.timeout_ms > values.interval_ms) issue('timeout_ms', 'The timeout must not exceed the interval.');
    if (values.retry_interval_ms && values.retry_interval_ms < 100) issue('retry_interval_ms', 'The retry delay must be 0 (the interval) or at least 100 ms.');
    if (values.type === 'agent' && !port.safeParse(values.agent_port).success) issue('agent_port', 'The agent port must be between 1 and 65535.');
    if (values.type === 'dns' && !DNS_NAME_PATTERN.test(values.dns_name)) issue('dns_name', "A domain name such as www.example.com, or '.'.");
    if (values.type === 'script' && !CHECK_SCRIPT_PATTERN.test(values.script)) issue('script', values.script ? CHECK_SCRIPT_HELP : 'Enter the command.');
    if (!isHttpCheck(values.type)) return;
    if (!HTTP_PATH_PATTERN.test(values.path)) issue('path', "An absolute path such as /health (no spaces, quotes, '#', '$' or backslashes).");
    const status = values.expected_status;
    if (!Number.isInteger(status) || status < 100 || status > 599) issue('expected_status', 'The expected status must be between 100 and 599.');
    if (values.host && !HOST_PATTERN.test(values.host)) issue('host', 'Enter a DNS host name such as www.example.com, or leave it empty.');
    if (values.expect_body && values.method === 'HEAD') issue('expect_body', 'A HEAD request has no body to match; use GET.');
    if (values.expect_body && values.expect_body_match === 'string' && !TEXT_PATTERN.test(values.expect_body)) issue('expect_body', TEXT_HELP);
    if (values.expect_body_match === 'digest' && !DIGEST_PATTERN.test(values.expect_body)) issue('expect_body', DIGEST_HELP);
  });
export type HealthCheckFormValues = z.infer<typeof healthCheckFormSchema>;

type CheckField = keyof HealthCheckFormValues;
const COMMON_CHECK_FIELDS = ['type', 'interval_ms', 'timeout_ms', 'rise', 'fall', 'retry_interval_ms'] as const;
const TYPE_FIELDS: Partial<Record<CheckType, readonly CheckField[]>> = {
  http: ['method', 'path', 'expected_status', 'host', 'expect_body', 'expect_body_match'],
  https: ['method', 'path', 'expected_status', 'host', 'expect_body', 'expect_body_match'],
  agent: ['agent_port'],
  dns: ['dns_type', 'dns_name'],
  script: ['script', 'script_dynamic'],
};

/** The fields the health-check form shows for this type on a pool of this layer. */
export function healthCheckFormFields(type: CheckType, layer: PoolLayer = 'unknown'): CheckField[] {
  const keepalived: CheckField[] = layer === 'proxy' ? [] : ['alpha', 'omega'];
  return [...COMMON_CHECK_FIELDS, ...(TYPE_FIELDS[type] ?? []), ...keepalived];
}

export function toHealthCheckForm(check?: HealthCheck | null): HealthCheckFormValues {
  return {
    type: check?.type ?? 'tcp',
    method: check?.method ?? 'GET',
    path: check?.path ?? '/',
    expected_status: check?.expected_status ?? 200,
    host: check?.host ?? '',
    expect_body: check?.expect_body ?? '',
    expect_body_match: check?.expect_body_match ?? 'string',
    agent_port: check?.agent_port || 10000,
    interval_ms: check?.interval_ms ?? 2000,
    timeout_ms: check?.timeout_ms ?? 1000,
    rise: check?.rise ?? 2,
    fall: check?.fall ?? 3,
    retry_interval_ms: check?.retry_interval_ms ?? 0,
    alpha: check?.alpha ?? false,
    omega: check?.omega ?? false,
    dns_type: check?.dns_type ?? 'SOA',
    dns_name: check?.dns_name ?? '.',
    script: check?.script ?? '',
    script_dynamic: check?.script_dynamic ?? false,
  };
}

/** Settings of other types are left out, so the stored ones are kept for later. */
export function toHealthCheckRequest(pool: number, values: HealthCheckFormValues, layer: PoolLayer = 'unknown'): HealthCheckRequest {
  const fields = healthCheckFormFields(values.type, layer);
  const picked = Object.fromEntries(fields.map((field) => [field, values[field]]));
  return { pool, ...picked } as HealthCheckRequest;
}

export function describeHealthCheck(check: HealthCheck | null | undefined): string {
  if (!check) return 'none';
  const every = `every ${check.interval_ms ?? 2000} ms`;
  switch (check.type) {
    case 'http':
    case 'https':
      return `${check.type.toUpperCase()} ${check.method ?? 'GET'} ${check.path ?? '/'} → ${check.expected_status ?? 200}, ${every}`;
    case 'agent':
      return `agent on port ${check.agent_port}, ${every}`;
    case 'ping':
      return `ping, ${every}`;
    case 'dns':
      return `DNS ${check.dns_type ?? 'SOA'} ${check.dns_name ?? '.'}, ${every}`;
    case 'script':
      return `script ${(check.script ?? '').split(' ')[0]?.split('/').pop() ?? ''}, ${every}`;
    default:
      return `TCP connect, ${every}`;
  }
}
