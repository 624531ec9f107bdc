// One place for query keys, so a change in one feature can refresh what others show
// (renaming a pool refreshes the pool choices on the virtual-service form; a new certificate
// the certificate choices; a runtime member change the revision history; a node's standby
// the nodes, the HA page and the history).
export const queryKeys = {
  me: ['auth', 'me'] as const,
  services: ['virtual-services'] as const,
  service: (id: number) => ['virtual-services', id] as const,
  rules: (serviceId: number) => ['virtual-services', serviceId, 'rules'] as const,
  pools: ['pools'] as const,
  pool: (id: number) => ['pools', id] as const,
  certificates: ['certificates'] as const,
  nodes: ['nodes'] as const,
  ipvsSync: ['ipvs-sync'] as const,
  haGroups: ['ha-groups'] as const,
  haEvents: (filters: { node: string; group: string }) => ['ha-events', filters] as const,
  revisions: ['revisions'] as const,
  revision: (id: number) => ['revisions', id] as const,
};
