import { type Fact, Facts } from '@/components';
import type { HaGroupChoice, IpvsSync } from '../types';

/** The sync settings as read-only facts, for those who may not change them. */
export function IpvsSyncSummary({ sync, haGroups }: { sync: IpvsSync; haGroups: readonly HaGroupChoice[] }) {
  if (!sync.enabled) return <p>Connections are not synchronised.</p>;
  const group = haGroups.find((g) => g.id === sync.ha_group);
  const facts: Fact[] = [
    ['Interface', sync.interface ?? 'eth0'],
    ['Sync ID', String(sync.sync_id ?? 0)],
    ['UDP port', String(sync.port ?? 8848)],
    ['TTL', String(sync.ttl ?? 1)],
    ['HA group', group ? `${group.name} (its master sends)` : 'none: every node sends and receives'],
    ['Multicast group', sync.group || '224.0.0.81'],
    ['Largest message', sync.max_packet ? `${sync.max_packet} bytes` : 'from the interface MTU'],
  ];
  return <Facts items={facts} />;
}
