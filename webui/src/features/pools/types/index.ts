import { z } from 'zod';
import type { Schemas } from '@/lib/api';
import { description, HOST_PATTERN, HTTP_PATH_PATTERN, ipAddress, objectName, port, weight, wholeNumber } from '@/lib/validation';

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

export const poolFormSchema = z.object({
  name: objectName,
  algorithm: z.enum(['round-robin', 'weighted-round-robin', 'least-connections', 'source-hash']),
  description,
});
export type PoolFormValues = z.infer<typeof poolFormSchema>;
export const POOL_FORM_FIELDS = ['name', 'algorithm', 'description'] as const;

export function toPoolForm(pool?: Pool): PoolFormValues {
  return { name: pool?.name ?? '', algorithm: pool?.algorithm ?? 'round-robin', description: pool?.description ?? '' };
}

// --- member ---

export const memberFormSchema = z.object({
  name: objectName,
  address: ipAddress,
  port,
  weight,
  state: z.enum(['enabled', 'drain', 'disabled']),
});
export type MemberFormValues = z.infer<typeof memberFormSchema>;
export const MEMBER_FORM_FIELDS = ['name', 'address', 'port', 'weight', 'state'] as const;

export function toMemberForm(member?: Member): MemberFormValues {
  return {
    name: member?.name ?? '',
    address: member?.address ?? '',
    port: member?.port ?? 80,
    weight: member?.weight ?? 1,
    state: member?.state ?? 'enabled',
  };
}

export function toMemberRequest(pool: number, values: MemberFormValues): MemberRequest {
  return { pool, ...values };
}

// --- health check ---

const intervalMs = (label: string) => wholeNumber(label, 100, 3_600_000);

export const healthCheckFormSchema = z
  .object({
    type: z.enum(['tcp', 'http']),
    path: z.string().trim(),
    expected_status: z.number({ error: 'Enter the expected status.' }),
    host: z.string().trim().max(253, 'At most 253 characters.'),
    interval_ms: intervalMs('interval'),
    timeout_ms: intervalMs('timeout'),
    rise: wholeNumber('rise count', 1, 100),
    fall: wholeNumber('fall count', 1, 100),
  })
  .superRefine((values, ctx) => {
    if (values.timeout_ms > values.interval_ms) {
      ctx.addIssue({ code: 'custom', path: ['timeout_ms'], message: 'The timeout must not exceed the interval.' });
    }
    if (values.type !== 'http') return;
    if (!HTTP_PATH_PATTERN.test(values.path)) {
      ctx.addIssue({ code: 'custom', path: ['path'], message: "An absolute path such as /health (no spaces, quotes, '#', '$' or backslashes)." });
    }
    const status = values.expected_status;
    if (!Number.isInteger(status) || status < 100 || status > 599) {
      ctx.addIssue({ code: 'custom', path: ['expected_status'], message: 'The expected status must be between 100 and 599.' });
    }
    if (values.host && !HOST_PATTERN.test(values.host)) {
      ctx.addIssue({ code: 'custom', path: ['host'], message: 'Enter a DNS host name such as www.example.com, or leave it empty.' });
    }
  });
export type HealthCheckFormValues = z.infer<typeof healthCheckFormSchema>;
export const HEALTH_CHECK_FORM_FIELDS = ['type', 'path', 'expected_status', 'host', 'interval_ms', 'timeout_ms', 'rise', 'fall'] as const;

export function toHealthCheckForm(check?: HealthCheck | null): HealthCheckFormValues {
  return {
    type: check?.type ?? 'tcp',
    path: check?.path ?? '/',
    expected_status: check?.expected_status ?? 200,
    host: check?.host ?? '',
    interval_ms: check?.interval_ms ?? 2000,
    timeout_ms: check?.timeout_ms ?? 1000,
    rise: check?.rise ?? 2,
    fall: check?.fall ?? 3,
  };
}

/** HTTP-only settings are left out of TCP checks, so the stored ones are kept for later. */
export function toHealthCheckRequest(pool: number, values: HealthCheckFormValues): HealthCheckRequest {
  const { path, expected_status, host, ...common } = values;
  return values.type === 'http' ? { pool, ...common, path, expected_status, host } : { pool, ...common };
}

export function describeHealthCheck(check: HealthCheck | null | undefined): string {
  if (!check) return 'none';
  const every = `every ${check.interval_ms ?? 2000} ms`;
  return check.type === 'http' ? `HTTP ${check.path ?? '/'} → ${check.expected_status ?? 200}, ${every}` : `TCP connect, ${every}`;
}
