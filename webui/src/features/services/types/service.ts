import { z } from 'zod';
import { type Schemas, VALUES } from '@/lib/api';
import { isHttpProtocol, isIpvs } from './forwarding';
import {
  cidrLines,
  description,
  ipAddress,
  joinLines,
  lineList,
  MIME_TYPE_PATTERN,
  objectName,
  port,
  splitLines,
  timeoutMs,
  wholeNumber,
} from '@/lib/validation';

export type VirtualService = Schemas['VirtualService'];
export type VirtualServiceRequest = Schemas['VirtualServiceRequest'];
export type ErrorPageStatus = Schemas['StatusEnum'];
/** What the form needs to know about a pool to offer it. */
export type PoolChoice = Pick<Schemas['Pool'], 'id' | 'name'>;
/** What the form needs to know about a certificate to offer it. */
export type CertificateChoice = Pick<Schemas['Certificate'], 'id' | 'name' | 'has_key' | 'is_ca'>;

export const TLS_POLICIES = [
  { value: 'modern', label: 'Modern (TLS 1.3 only)' },
  { value: 'intermediate', label: 'Intermediate (TLS 1.2 and 1.3)' },
  { value: 'legacy', label: 'Legacy (TLS 1.0 and newer)' },
] as const;

export const CLIENT_AUTH = [
  { value: 'none', label: 'No client certificates' },
  { value: 'optional', label: 'Optional: verify when sent' },
  { value: 'required', label: 'Required' },
] as const;

export const FORWARDED = [
  { value: 'x-forwarded-for', label: 'X-Forwarded-For' },
  { value: 'forwarded', label: 'Forwarded (RFC 7239)' },
  { value: 'both', label: 'Both' },
  { value: 'none', label: 'None' },
] as const;

/** Status codes HAProxy can answer with a custom page (compiler rules.ERROR_PAGE_STATUSES). */
export const ERROR_PAGE_STATUSES: readonly ErrorPageStatus[] = [
  400, 401, 403, 404, 405, 407, 408, 410, 413, 425, 429, 500, 501, 502, 503, 504,
];

const DEFAULT_COMPRESSION_TYPES = ['text/html', 'text/plain', 'text/css', 'application/json'];

const count = (label: string) => wholeNumber(label, 0, 1_000_000);

const errorPageSchema = z.object({
  status: z.string().min(1, 'Choose a status.'),
  content_type: z.string().trim().regex(MIME_TYPE_PATTERN, 'A media type such as text/html.'),
  body: z.string().min(1, 'Enter the page.').max(15_360, 'At most 15360 characters.'),
});

const serviceFieldsSchema = z
  .object({
    // listener
    name: objectName,
    vip: ipAddress,
    port,
    port_end: wholeNumber('last port', 0, 65535),
    forwarding: z.enum(VALUES.forwarding),
    protocol: z.enum(VALUES.protocol),
    one_packet_scheduling: z.boolean(),
    default_pool: z.string().min(1, 'Choose the pool that serves this virtual service.'),
    enabled: z.boolean(),
    description,
    redirect_https: z.boolean(),
    // TLS
    default_certificate: z.string(),
    sni_certificates: z.array(z.string()),
    tls_policy: z.enum(['modern', 'intermediate', 'legacy']),
    client_auth: z.enum(['none', 'optional', 'required']),
    client_ca: z.string(),
    alpn_h2: z.boolean(),
    hsts_max_age_s: wholeNumber('HSTS max age', 0, 2 * 365 * 86_400),
    // protection
    allow_cidrs: cidrLines,
    deny_cidrs: cidrLines,
    rate_limit_requests: count('request limit'),
    rate_limit_period_s: wholeNumber('period', 1, 3600),
    conn_limit: count('connection limit'),
    max_connections: count('maximum'),
    max_body_bytes: wholeNumber('body limit', 0, 2 ** 40),
    compression: z.boolean(),
    compression_types: lineList((entry) => MIME_TYPE_PATTERN.test(entry), (entry) => `not a media type such as text/html: '${entry}'`),
    forwarded: z.enum(['none', 'x-forwarded-for', 'forwarded', 'both']),
    // timeouts
    client_timeout_ms: timeoutMs('client timeout'),
    http_request_timeout_ms: timeoutMs('request timeout'),
    keep_alive_timeout_ms: timeoutMs('keep-alive timeout'),
    error_pages: z.array(errorPageSchema),
  })
  .superRefine((values, ctx) => {
    const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
    if (isIpvs(values.forwarding)) {
      if (values.protocol !== 'tcp' && values.protocol !== 'udp') issue('protocol', 'IPVS forwards TCP or UDP.');
      if (values.port_end && values.port_end <= values.port) issue('port_end', 'The last port must be above the first, or 0 for one port.');
      return;
    }
    if (values.protocol === 'udp') issue('protocol', 'UDP is forwarded by IPVS: choose NAT, direct routing or tunnel.');
    if (values.protocol !== 'https') return;
    if (!values.default_certificate) {
      ctx.addIssue({ code: 'custom', path: ['default_certificate'], message: 'An HTTPS service needs a certificate.' });
    }
    if (values.client_auth !== 'none' && !values.client_ca) {
      ctx.addIssue({ code: 'custom', path: ['client_ca'], message: 'Choose the CA bundle client certificates must chain to.' });
    }
    const seen = new Set<string>();
    values.error_pages.forEach((page, index) => {
      if (seen.has(page.status)) ctx.addIssue({ code: 'custom', path: ['error_pages', index, 'status'], message: 'Another page has this status.' });
      seen.add(page.status);
    });
  });
export type ServiceFormValues = z.infer<typeof serviceFieldsSchema>;

/**
 * The form's rules. Settings the chosen forwarding does not use are hidden: they go back to
 * their defaults before validation, so a value left behind in a hidden field neither blocks
 * the form nor reaches the API (which refuses HAProxy settings on IPVS services and layer-4
 * ones on proxied services).
 */
export const serviceFormSchema = z.preprocess((raw: ServiceFormValues) => applicableSettings(raw), serviceFieldsSchema);
export type ErrorPageFormValues = ServiceFormValues['error_pages'][number];

const LISTENER_FIELDS = [
  'name', 'vip', 'port', 'port_end', 'forwarding', 'protocol', 'one_packet_scheduling', 'default_pool', 'enabled', 'description', 'redirect_https',
] as const;
const TLS_FIELDS = ['default_certificate', 'sni_certificates', 'tls_policy', 'client_auth', 'client_ca', 'alpn_h2', 'hsts_max_age_s'] as const;
const PROTECTION_FIELDS = [
  'allow_cidrs', 'deny_cidrs', 'rate_limit_requests', 'rate_limit_period_s', 'conn_limit', 'max_connections', 'max_body_bytes',
  'compression', 'compression_types', 'forwarded',
] as const;
const TIMEOUT_FIELDS = ['client_timeout_ms', 'http_request_timeout_ms', 'keep_alive_timeout_ms'] as const;

export type ServiceFormField = (typeof SERVICE_FORM_FIELDS)[number] | 'error_pages' | `error_pages.${number}.${'status' | 'content_type' | 'body'}`;
export const SERVICE_FORM_FIELDS = [...LISTENER_FIELDS, ...TLS_FIELDS, ...PROTECTION_FIELDS, ...TIMEOUT_FIELDS] as const;

/** HAProxy's settings: what an IPVS (layer 4) service leaves at its defaults. */
const PROXY_ONLY_FIELDS = ['redirect_https', ...TLS_FIELDS, ...PROTECTION_FIELDS, ...TIMEOUT_FIELDS, 'error_pages'] as const;
const IPVS_FIELDS = ['name', 'vip', 'port', 'port_end', 'forwarding', 'protocol', 'default_pool', 'enabled', 'description'] as const;

type ShownBy = Pick<ServiceFormValues, 'forwarding' | 'protocol'> & { error_pages: readonly unknown[] };

/** The fields the form shows for these values (server messages for hidden ones go above the form). */
export function serviceFormFields(values: ShownBy): ServiceFormField[] {
  const { forwarding, protocol } = values;
  if (isIpvs(forwarding)) return protocol === 'udp' ? [...IPVS_FIELDS, 'one_packet_scheduling'] : [...IPVS_FIELDS];
  const https = protocol === 'https';
  const http = isHttpProtocol(protocol);
  const hiddenUnlessHttp = new Set<string>([
    'rate_limit_requests', 'rate_limit_period_s', 'max_body_bytes', 'compression', 'compression_types', 'forwarded',
    'http_request_timeout_ms', 'keep_alive_timeout_ms',
  ]);
  const fields: ServiceFormField[] = SERVICE_FORM_FIELDS.filter(
    (field) =>
      (https || !(TLS_FIELDS as readonly string[]).includes(field)) &&
      (http || !hiddenUnlessHttp.has(field)) &&
      (protocol === 'http' || field !== 'redirect_https') &&
      field !== 'port_end' &&
      field !== 'one_packet_scheduling',
  );
  if (!http) return fields;
  const rows = Array.from({ length: values.error_pages.length }, (_, i) => [`error_pages.${i}.status`, `error_pages.${i}.content_type`, `error_pages.${i}.body`] as const);
  return [...fields, 'error_pages', ...rows.flat()];
}

/**
 * The compiler names error pages by status (`error_pages/404/body`) and the rate limit as
 * one object (`rate_limit/period_s`); the form has rows and two fields.
 *
 * A problem the service's settings cause in its pool comes back about the pool
 * (`pools/web/members/s1/port: direct-routing cannot change the port`): a member's port or
 * address goes next to Forwarding (the method decides what they may be), anything else
 * about the pool next to Pool.
 */
export function translateServicePath(path: string[], values: ServiceFormValues, pools: readonly PoolChoice[] = []): string[] {
  const [field, key, ...rest] = path;
  if (field === 'non_field_errors' && key === 'pools') {
    const [pool, part, member, memberField, ...more] = rest;
    if (pool !== pools.find((choice) => String(choice.id) === values.default_pool)?.name) return path;
    if (part === 'members' && member && (memberField === 'port' || memberField === 'address') && more.length === 0) {
      return ['forwarding', `member ${member}`, memberField];
    }
    return part ? ['default_pool', ...rest.slice(1)] : ['default_pool'];
  }
  if (field === 'error_pages' && key !== undefined) {
    const row = values.error_pages.findIndex((page) => page.status === key);
    if (row >= 0 && rest.length > 0) return ['error_pages', String(row), ...rest];
    if (row >= 0 && Number(key) >= 100) return ['error_pages', String(row), 'status'];
  }
  if (field === 'rate_limit_requests' && key === 'period_s') return ['rate_limit_period_s', ...rest];
  if (field === 'rate_limit_requests' && key === 'requests') return ['rate_limit_requests', ...rest];
  return path;
}

export function emptyServiceForm(): ServiceFormValues {
  return {
    name: '', vip: '', port: 80, port_end: 0, forwarding: 'proxy', protocol: 'http', one_packet_scheduling: false,
    default_pool: '', enabled: true, description: '', redirect_https: false,
    default_certificate: '', sni_certificates: [], tls_policy: 'intermediate', client_auth: 'none', client_ca: '', alpn_h2: true,
    hsts_max_age_s: 0,
    allow_cidrs: '', deny_cidrs: '', rate_limit_requests: 0, rate_limit_period_s: 10, conn_limit: 0, max_connections: 0,
    max_body_bytes: 0, compression: false, compression_types: joinLines(DEFAULT_COMPRESSION_TYPES), forwarded: 'x-forwarded-for',
    client_timeout_ms: 30_000, http_request_timeout_ms: 10_000, keep_alive_timeout_ms: 10_000,
    error_pages: [],
  };
}

/** A new error page row: 503 (maintenance) first, else the first status not used yet. */
export function emptyErrorPage(taken: readonly string[]): ErrorPageFormValues {
  const free = ['503', ...ERROR_PAGE_STATUSES.map(String)].find((status) => !taken.includes(status)) ?? '';
  return { status: free, content_type: 'text/html', body: '' };
}

const idOrEmpty = (id: number | null | undefined) => (id == null ? '' : String(id));

export function toServiceForm(service: VirtualService): ServiceFormValues {
  const defaults = emptyServiceForm();
  return {
    ...defaults,
    name: service.name,
    vip: service.vip,
    port: service.port,
    port_end: service.port_end ?? 0,
    forwarding: service.forwarding ?? 'proxy',
    protocol: service.protocol ?? 'http',
    one_packet_scheduling: service.one_packet_scheduling ?? false,
    default_pool: String(service.default_pool),
    enabled: service.enabled ?? true,
    description: service.description ?? '',
    redirect_https: service.redirect_https ?? false,
    default_certificate: idOrEmpty(service.default_certificate),
    sni_certificates: (service.sni_certificates ?? []).map(String),
    tls_policy: service.tls_policy ?? defaults.tls_policy,
    client_auth: service.client_auth ?? 'none',
    client_ca: idOrEmpty(service.client_ca),
    alpn_h2: service.alpn_h2 ?? true,
    hsts_max_age_s: service.hsts_max_age_s ?? 0,
    allow_cidrs: joinLines(service.allow_cidrs),
    deny_cidrs: joinLines(service.deny_cidrs),
    rate_limit_requests: service.rate_limit_requests ?? 0,
    rate_limit_period_s: service.rate_limit_period_s ?? 10,
    conn_limit: service.conn_limit ?? 0,
    max_connections: service.max_connections ?? 0,
    max_body_bytes: service.max_body_bytes ?? 0,
    compression: service.compression ?? false,
    compression_types: service.compression_types ? joinLines(service.compression_types) : defaults.compression_types,
    forwarded: service.forwarded ?? defaults.forwarded,
    client_timeout_ms: service.client_timeout_ms ?? defaults.client_timeout_ms,
    http_request_timeout_ms: service.http_request_timeout_ms ?? defaults.http_request_timeout_ms,
    keep_alive_timeout_ms: service.keep_alive_timeout_ms ?? defaults.keep_alive_timeout_ms,
    error_pages: (service.error_pages ?? []).map((page) => ({ status: String(page.status), content_type: page.content_type, body: page.body })),
  };
}

/**
 * The values with what the forwarding method does not use put back to its defaults: an
 * IPVS service has none of HAProxy's settings (TLS, protection, timeouts, error pages), a
 * proxied one no port range or one-packet scheduling (UDP only).
 */
export function applicableSettings(values: ServiceFormValues): ServiceFormValues {
  if (!isIpvs(values.forwarding)) return { ...values, port_end: 0, one_packet_scheduling: false };
  const defaults = emptyServiceForm();
  const proxyDefaults = Object.fromEntries(PROXY_ONLY_FIELDS.map((field) => [field, defaults[field]]));
  return { ...values, ...proxyDefaults, one_packet_scheduling: values.protocol === 'udp' && values.one_packet_scheduling };
}

/**
 * The whole virtual service for a PUT. Settings that do not apply to the forwarding method
 * or protocol are sent off (the compiler refuses TLS settings on plain HTTP, HTTP-only ones
 * on TCP, HAProxy's on IPVS services and layer-4 ones on proxied services).
 */
export function toServiceRequest(form: ServiceFormValues): VirtualServiceRequest {
  const values = applicableSettings(form);
  const https = values.protocol === 'https';
  const http = isHttpProtocol(values.protocol);
  const id = (value: string) => (value ? Number(value) : null);
  return {
    name: values.name,
    vip: values.vip,
    port: values.port,
    port_end: values.port_end,
    forwarding: values.forwarding,
    protocol: values.protocol,
    one_packet_scheduling: values.one_packet_scheduling,
    enabled: values.enabled,
    default_pool: Number(values.default_pool),
    description: values.description,
    redirect_https: values.protocol === 'http' && values.redirect_https,
    default_certificate: https ? id(values.default_certificate) : null,
    sni_certificates: https ? values.sni_certificates.map(Number) : [],
    tls_policy: values.tls_policy,
    client_auth: https ? values.client_auth : 'none',
    client_ca: https && values.client_auth !== 'none' ? id(values.client_ca) : null,
    alpn_h2: values.alpn_h2,
    hsts_max_age_s: https ? values.hsts_max_age_s : 0,
    allow_cidrs: splitLines(values.allow_cidrs),
    deny_cidrs: splitLines(values.deny_cidrs),
    rate_limit_requests: http ? values.rate_limit_requests : 0,
    rate_limit_period_s: values.rate_limit_period_s,
    conn_limit: values.conn_limit,
    max_connections: values.max_connections,
    max_body_bytes: http ? values.max_body_bytes : 0,
    compression: http && values.compression,
    compression_types: splitLines(values.compression_types),
    forwarded: values.forwarded,
    client_timeout_ms: values.client_timeout_ms,
    http_request_timeout_ms: values.http_request_timeout_ms,
    keep_alive_timeout_ms: values.keep_alive_timeout_ms,
    error_pages: http
      ? values.error_pages.map((page) => ({ status: Number(page.status) as ErrorPageStatus, content_type: page.content_type, body: page.body }))
      : [],
  };
}
