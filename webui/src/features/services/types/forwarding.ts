import type { Schemas } from '@/lib/api';

export type Forwarding = Schemas['VirtualServiceForwardingEnum'];
export type Protocol = Schemas['ProtocolEnum'];

/** How a service forwards, with what each method asks of the network and the members. */
export const FORWARDING_METHODS: readonly { value: Forwarding; label: string; explain: string }[] = [
  {
    value: 'proxy',
    label: 'Proxy (HAProxy)',
    explain: 'HAProxy ends each connection and opens its own to a member: HTTP, HTTPS (TLS offload, rules) or TCP. Members need no changes.',
  },
  {
    value: 'nat',
    label: 'NAT (IPVS, layer 4)',
    explain: "The kernel rewrites the destination to the member; the members' default gateway must be the balancer so replies come back through it. Member ports may differ.",
  },
  {
    value: 'direct-routing',
    label: 'Direct routing (IPVS, layer 4)',
    explain: 'Members on the balancer’s subnet answer clients directly: each needs the VIP on its loopback (not answering ARP for it), on the service’s port.',
  },
  {
    value: 'tunnel',
    label: 'IP-in-IP tunnel (IPVS, layer 4)',
    explain: 'Members on any network answer clients directly: each needs the VIP on tunl0 (ipip, rp_filter off), on the service’s port.',
  },
];

/** nat, direct-routing and tunnel are IPVS (layer 4, through keepalived); proxy is HAProxy. */
export function isIpvs(forwarding: Forwarding | undefined): boolean {
  return forwarding !== undefined && forwarding !== 'proxy';
}

export function forwardingLabel(forwarding: Forwarding | undefined): string {
  return FORWARDING_METHODS.find((method) => method.value === (forwarding ?? 'proxy'))!.label;
}

const PROXY_PROTOCOLS: readonly { value: Protocol; label: string }[] = [
  { value: 'http', label: 'HTTP (layer 7)' },
  { value: 'https', label: 'HTTPS (TLS offload, layer 7)' },
  { value: 'tcp', label: 'TCP (layer 4 proxy)' },
];
const IPVS_PROTOCOLS: readonly { value: Protocol; label: string }[] = [
  { value: 'tcp', label: 'TCP' },
  { value: 'udp', label: 'UDP' },
];

/** The protocols a forwarding method offers: HAProxy proxies HTTP(S) and TCP, IPVS forwards TCP and UDP. */
export function protocolChoices(forwarding: Forwarding) {
  return isIpvs(forwarding) ? IPVS_PROTOCOLS : PROXY_PROTOCOLS;
}

/** The protocol to switch to when the forwarding method changes and cannot carry the current one. */
export function protocolFor(forwarding: Forwarding, protocol: Protocol): Protocol {
  return protocolChoices(forwarding).some((choice) => choice.value === protocol) ? protocol : 'tcp';
}

export const isHttpProtocol = (protocol: Protocol | undefined) => protocol === 'http' || protocol === 'https';
