import type { VirtualService } from '../types';

type ServiceWarningsProps = { service: Pick<VirtualService, 'name' | 'warnings'>; compact?: boolean };

/**
 * What will probably not work as meant (a NAT member the balancer has no network to, a
 * scheduler the kernel lacks): not errors, so polite (role=status), and worded, not coloured.
 */
export function ServiceWarnings({ service, compact = false }: ServiceWarningsProps) {
  const warnings = service.warnings ?? [];
  if (warnings.length === 0) return null;
  const title = warnings.length === 1 ? '1 warning' : `${warnings.length} warnings`;
  return (
    <div className={compact ? 'service-warnings service-warnings-compact' : 'alert alert-warning service-warnings'} role="status" aria-label={`Warnings for ${service.name}`}>
      <p className="alert-title">{compact ? title : `${title}: this will probably not work as meant`}</p>
      <ul className="warning-list">
        {warnings.map((warning) => (
          <li key={warning}>{warning}</li>
        ))}
      </ul>
    </div>
  );
}
