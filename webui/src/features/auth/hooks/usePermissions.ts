import type { Schemas } from '@/lib/api';
import { useCurrentUser } from './useSession';

export type Role = Schemas['RoleEnum'];

/**
 * What the signed-in person may do, as the API enforces it: a viewer reads; an operator also
 * drains, enables and disables members, sets standby, applies, confirms and rolls back; an admin
 * edits everything. The console hides what the API would refuse.
 */
export function usePermissions(): { role: Role | undefined; canOperate: boolean; canEdit: boolean } {
  const role = useCurrentUser().data?.role;
  return { role, canOperate: role === 'operator' || role === 'admin', canEdit: role === 'admin' };
}
