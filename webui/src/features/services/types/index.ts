import { z } from 'zod';
import type { Schemas } from '@/lib/api';
import { description, ipAddress, objectName, port } from '@/lib/validation';

export type VirtualService = Schemas['VirtualService'];
export type VirtualServiceRequest = Schemas['VirtualServiceRequest'];
export type Protocol = Schemas['ProtocolEnum'];
/** What the form needs to know about a pool to offer it. */
export type PoolChoice = Pick<Schemas['Pool'], 'id' | 'name'>;

export const PROTOCOLS: readonly { value: Protocol; label: string }[] = [
  { value: 'http', label: 'HTTP (layer 7)' },
  { value: 'tcp', label: 'TCP (layer 4 proxy)' },
];

export const serviceFormSchema = z.object({
  name: objectName,
  vip: ipAddress,
  port,
  protocol: z.enum(['http', 'tcp']),
  default_pool: z.string().min(1, 'Choose the pool that serves this virtual service.'),
  enabled: z.boolean(),
  description,
});
export type ServiceFormValues = z.infer<typeof serviceFormSchema>;

export const SERVICE_FORM_FIELDS = ['name', 'vip', 'port', 'protocol', 'default_pool', 'enabled', 'description'] as const;

export function emptyServiceForm(): ServiceFormValues {
  return { name: '', vip: '', port: 80, protocol: 'http', default_pool: '', enabled: true, description: '' };
}

export function toServiceForm(service: VirtualService): ServiceFormValues {
  return {
    name: service.name,
    vip: service.vip,
    port: service.port,
    protocol: service.protocol ?? 'http',
    default_pool: String(service.default_pool),
    enabled: service.enabled ?? true,
    description: service.description ?? '',
  };
}

export function toServiceRequest(values: ServiceFormValues): VirtualServiceRequest {
  return { ...values, default_pool: Number(values.default_pool) };
}
