import { Alert } from '@/components';
import { useMembership } from '../hooks/useSession';
import type { Membership } from '../types';

const WHY: Record<NonNullable<Membership['read_only']>, string> = {
  standby: 'is a standby of the cluster: its database is a read-only copy of the primary’s',
  fenced: 'is fenced: it does not hold the cluster’s management address, so it takes no changes',
};

/**
 * On an appliance that takes no changes (the API answers every write 503): says so, and
 * where signing in and changes happen instead. Nothing on an appliance that takes them.
 */
export function ReadOnlyBanner() {
  const membership = useMembership().data;
  if (!membership?.read_only) return null;
  const { node, primary } = membership;
  return (
    <div className="read-only-banner">
      <Alert tone="warning" title="This appliance is read-only">
        <p>
          This appliance{node ? ` (node ${node})` : ''} {WHY[membership.read_only]}. Sign in and make changes on the primary
          {primary ? (
            <>
              : <a href={primary}>{primary}</a>.
            </>
          ) : (
            ', which holds the management address.'
          )}
        </p>
      </Alert>
    </div>
  );
}
