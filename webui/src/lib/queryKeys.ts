// One place for query keys, so a change in one feature can refresh what others show
// (renaming a pool refreshes the pool choices on the virtual-service form; a new certificate
// the certificate choices; a runtime member change the revision history; a node's standby
// the nodes, the HA page and the history).
export const queryKeys = {
  me: ['auth', 'me'] as const,
  membership: ['auth', 'membership'] as const,
  services: ['virtual-services'] as const,
  service: (id: number) => ['virtual-services', id] as const,
  rules: (serviceId: number) => ['virtual-services', serviceId, 'rules'] as const,
  pools: ['pools'] as const,
  pool: (id: number) => ['pools', id] as const,
  certificates: ['certificates'] as const,
  nodes: ['nodes'] as const,
  ipvsSync: ['ipvs-sync'] as const,
  // Under the nodes' key: an appliance that joins with a code spends it and becomes a node.
  joinCodes: ['nodes', 'join-codes'] as const,
  replication: ['nodes', 'replication'] as const,
  daemonEvents: ['nodes', 'daemon-events'] as const,
  haGroups: ['ha-groups'] as const,
  haEvents: (filters: { node: string; group: string }) => ['ha-events', filters] as const,
  revisions: ['revisions'] as const,
  revision: (id: number) => ['revisions', id] as const,
  // Under 'revisions': whatever refreshes the history also refreshes the pending banner.
  revisionsPending: ['revisions', 'pending'] as const,
  users: ['users'] as const,
  tokens: ['tokens'] as const,
  audit: ['audit'] as const,
  auditPage: (filters: Record<string, string>, offset: number) => ['audit', filters, offset] as const,
  // Live figures and health: a runtime member change refreshes them all at once.
  telemetry: ['telemetry'] as const,
  overview: ['telemetry', 'overview'] as const,
  serviceMetrics: (service: number | null, window: { minutes: number; step: number }) => ['telemetry', 'metrics', 'services', service, window] as const,
  memberMetrics: (pool: number, window: { minutes: number; step: number }) => ['telemetry', 'metrics', 'members', pool, window] as const,
  health: (filter: { pool?: number; member?: number; service?: number }) => ['telemetry', 'health', filter] as const,
  healthEvents: (member: number) => ['telemetry', 'health-events', member] as const,
};
