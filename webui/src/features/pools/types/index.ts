import { z } from 'zod';
import type { Schemas } from '@/lib/api';
import {
  description,
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

export type Pool = Schemas['Pool'];
export type PoolRequest = Schemas['PoolRequest'];
export type Member = Schemas['Member'];
export type MemberRequest = Schemas['MemberRequest'];
export type MemberState = Schemas['MemberStateEnum'];
export type HealthCheck = Schemas['HealthCheck'];
export type HealthCheckRequest = Schemas['HealthCheckRequest'];
export type Algorithm = Schemas['AlgorithmEnum'];

export const ALGORITHMS: readonly { value: Algorithm; label: string }[] = [
  { value: 'round-robin', label: 'Round robin (weights ignored)' },
  { value: 'weighted-round-robin', label: 'Weighted round robin' },
  { value: 'least-connections', label: 'Least connections (weighted)' },
  { value: 'source-hash', label: 'Source address hash' },
];

export const MEMBER_STATES: readonly { value: MemberState; label: string; action: string }[] = [
  { value: 'enabled', label: 'Enabled', action: 'Enable' },
  { value: 'drain', label: 'Draining', action: 'Drain' },
  { value: 'disabled', label: 'Disabled', action: 'Disable' },
];

export function algorithmLabel(value: Algorithm | undefined): string {
  return ALGORITHMS.find((a) => a.value === value)?.label ?? value ?? 'round robin';
}

// --- pool ---

export type PersistenceType = Schemas['PersistenceTypeEnum'];
/** What the pool form needs to know about a certificate to offer it as a CA. */
export type CertificateChoice = Pick<Schemas['Certificate'], 'id' | 'name' | 'is_ca'>;

export const PERSISTENCE_TYPES: readonly { value: PersistenceType; label: string }[] = [
  { value: 'none', label: 'None' },
  { value: 'cookie_insert', label: 'Cookie inserted by the balancer' },
  { value: 'cookie_rewrite', label: "Rewrite the application's cookie" },
  { value: 'cookie_prefix', label: "Prefix the application's cookie" },
  { value: 'app_cookie', label: "Learn the application's session cookie" },
  { value: 'source', label: 'Client source address' },
  { value: 'ssl_session_id', label: 'TLS session ID (TCP services)' },
  { value: 'header', label: 'Request header' },
];

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

export const HTTP_REUSE = [
  { value: 'never', label: 'Never' },
  { value: 'safe', label: 'Safe (first request of a client on its own)' },
  { value: 'aggressive', label: 'Aggressive' },
  { value: 'always', label: 'Always' },
] as const;

export const PROXY_PROTOCOLS = [
  { value: 'none', label: 'None' },
  { value: 'v1', label: 'PROXY protocol v1 (text)' },
  { value: 'v2', label: 'PROXY protocol v2 (binary)' },
] as const;

const persistenceTimeout = (label: string, min: number) => wholeNumber(label, min, 30 * 86_400);

const persistenceSchema = z
  .object({
    type: z.enum(['none', 'cookie_insert', 'cookie_rewrite', 'cookie_prefix', 'app_cookie', 'source', 'ssl_session_id', 'header']),
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
    algorithm: z.enum(['round-robin', 'weighted-round-robin', 'least-connections', 'source-hash']),
    description,
    persistence: persistenceSchema,
    http_reuse: z.enum(['never', 'safe', 'aggressive', 'always']),
    pool_max_conn: wholeNumber('idle connection limit', -1, 1_000_000),
    pool_purge_delay_ms: wholeNumber('purge delay', 0, 86_400_000),
    tls: z.boolean(),
    tls_verify: z.boolean(),
    tls_ca: z.string(),
    tls_sni: z.string().trim().refine((sni) => sni === '' || SNI_PATTERN.test(sni), 'A host name, @host, or empty.'),
    proxy_protocol: z.enum(['none', 'v1', 'v2']),
    connect_timeout_ms: timeoutMs('connect timeout'),
    server_timeout_ms: timeoutMs('server timeout'),
    queue_timeout_ms: timeoutMs('queue timeout'),
    maintenance_page: z.string().max(65_536, 'At most 65536 characters.'),
  })
  .superRefine((pool, ctx) => {
    if (pool.tls && pool.tls_verify && !pool.tls_ca) {
      ctx.addIssue({ code: 'custom', path: ['tls_ca'], message: "Choose the CA bundle that verifies the members' certificates." });
    }
  });
export type PoolFormValues = z.infer<typeof poolFormSchema>;
type PersistenceField = `persistence.${keyof PoolFormValues['persistence']}`;
export type PoolFormField = keyof PoolFormValues | PersistenceField;

const POOL_FIELDS = [
  'name', 'algorithm', 'description', 'persistence', 'persistence.type', 'http_reuse', 'pool_max_conn', 'pool_purge_delay_ms',
  'tls', 'proxy_protocol', 'connect_timeout_ms', 'server_timeout_ms', 'queue_timeout_ms', 'maintenance_page',
] as const;

/** The fields the pool form shows for these values. */
export function poolFormFields(values: Pick<PoolFormValues, 'persistence' | 'tls' | 'tls_verify'>): PoolFormField[] {
  const persistence = PERSISTENCE_FIELDS[values.persistence.type].map((field): PersistenceField => `persistence.${field}`);
  const tls: PoolFormField[] = values.tls ? ['tls_verify', 'tls_sni', ...(values.tls_verify ? (['tls_ca'] as const) : [])] : [];
  return [...POOL_FIELDS, ...persistence, ...tls];
}

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
    http_reuse: pool?.http_reuse ?? 'safe',
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
  };
}

/** The pool for a PUT; the CA is sent only when members' certificates are verified. */
export function toPoolRequest(values: PoolFormValues): PoolRequest {
  const verified = values.tls && values.tls_verify;
  return { ...values, tls_ca: verified && values.tls_ca ? Number(values.tls_ca) : null };
}

// --- member ---

const memberLimit = (label: string) => wholeNumber(label, 0, 1_000_000);

export const memberFormSchema = z.object({
  name: objectName,
  address: ipAddress,
  port,
  weight,
  state: z.enum(['enabled', 'drain', 'disabled']),
  backup: z.boolean(),
  max_connections: memberLimit('connection limit'),
  max_queue: memberLimit('queue limit'),
  slowstart_ms: wholeNumber('slow start', 0, 86_400_000),
});
export type MemberFormValues = z.infer<typeof memberFormSchema>;
export const MEMBER_FORM_FIELDS = ['name', 'address', 'port', 'weight', 'state', 'backup', 'max_connections', 'max_queue', 'slowstart_ms'] as const;

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
  };
}

export function toMemberRequest(pool: number, values: MemberFormValues): MemberRequest {
  return { pool, ...values };
}

/** A change made to a live member at once (HAProxy's runtime API), without applying. */
export type MemberRuntimeChange = Schemas['MemberRuntimeRequest'];
export type MemberRuntimeResult = Schemas['MemberRuntimeResult'];

// --- health check ---

export type CheckType = Schemas['HealthCheckTypeEnum'];

export const CHECK_TYPES: readonly { value: CheckType; label: string }[] = [
  { value: 'tcp', label: 'TCP connect' },
  { value: 'http', label: 'HTTP request' },
  { value: 'https', label: 'HTTPS request' },
  { value: 'agent', label: 'Agent (load agent on the member)' },
  { value: 'ping', label: 'Ping (ICMP echo)' },
];
export const CHECK_METHODS = ['GET', 'HEAD', 'OPTIONS', 'POST'] as const;

export const isHttpCheck = (type: CheckType) => type === 'http' || type === 'https';

const intervalMs = (label: string) => wholeNumber(label, 100, 3_600_000);

export const healthCheckFormSchema = z
  .object({
    type: z.enum(['tcp', 'http', 'https', 'agent', 'ping']),
    method: z.enum(CHECK_METHODS),
    path: z.string().trim(),
    expected_status: z.number({ error: 'Enter the expected status.' }),
    host: z.string().trim().max(253, 'At most 253 characters.'),
    expect_body: z.string(),
    expect_body_match: z.enum(['string', 'regex']),
    agent_port: z.number({ error: 'Enter the agent port.' }),
    interval_ms: intervalMs('interval'),
    timeout_ms: intervalMs('timeout'),
    rise: wholeNumber('rise count', 1, 100),
    fall: wholeNumber('fall count', 1, 100),
  })
  .superRefine((values, ctx) => {
    const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
    if (values.timeout_ms > values.interval_ms) issue('timeout_ms', 'The timeout must not exceed the interval.');
    if (values.type === 'agent' && !port.safeParse(values.agent_port).success) issue('agent_port', 'The agent port must be between 1 and 65535.');
    if (!isHttpCheck(values.type)) return;
    if (!HTTP_PATH_PATTERN.test(values.path)) issue('path', "An absolute path such as /health (no spaces, quotes, '#', '$' or backslashes).");
    const status = values.expected_status;
    if (!Number.isInteger(status) || status < 100 || status > 599) issue('expected_status', 'The expected status must be between 100 and 599.');
    if (values.host && !HOST_PATTERN.test(values.host)) issue('host', 'Enter a DNS host name such as www.example.com, or leave it empty.');
    if (values.expect_body && values.method === 'HEAD') issue('expect_body', 'A HEAD request has no body to match; use GET.');
    if (values.expect_body && values.expect_body_match === 'string' && !TEXT_PATTERN.test(values.expect_body)) issue('expect_body', TEXT_HELP);
  });
export type HealthCheckFormValues = z.infer<typeof healthCheckFormSchema>;

const COMMON_CHECK_FIELDS = ['type', 'interval_ms', 'timeout_ms', 'rise', 'fall'] as const;
const HTTP_CHECK_FIELDS = ['method', 'path', 'expected_status', 'host', 'expect_body', 'expect_body_match'] as const;

/** The fields the health-check form shows for this type. */
export function healthCheckFormFields(type: CheckType): (keyof HealthCheckFormValues)[] {
  if (isHttpCheck(type)) return [...COMMON_CHECK_FIELDS, ...HTTP_CHECK_FIELDS];
  return type === 'agent' ? [...COMMON_CHECK_FIELDS, 'agent_port'] : [...COMMON_CHECK_FIELDS];
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
  };
}

/** Settings of other types are left out, so the stored ones are kept for later. */
export function toHealthCheckRequest(pool: number, values: HealthCheckFormValues): HealthCheckRequest {
  const fields = healthCheckFormFields(values.type);
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
    default:
      return `TCP connect, ${every}`;
  }
}
