/** What a nav item needs: nothing beyond signing in, operator (or admin), or admin. */
export type NavNeed = 'read' | 'operate' | 'edit';

export type NavItem = { to: string; label: string; need: NavNeed };
export type NavGroup = { label: string; items: readonly NavItem[] };

/** The console's pages, grouped as the sidebar shows them. */
export const NAV_GROUPS: readonly NavGroup[] = [
  { label: 'Overview', items: [{ to: '/', label: 'Dashboard', need: 'read' }] },
  {
    label: 'Traffic',
    items: [
      { to: '/services', label: 'Virtual services', need: 'read' },
      { to: '/pools', label: 'Pools', need: 'read' },
      { to: '/certificates', label: 'Certificates', need: 'read' },
    ],
  },
  {
    label: 'Changes',
    items: [
      { to: '/revisions', label: 'Apply & history', need: 'read' },
      { to: '/audit', label: 'Audit log', need: 'operate' },
    ],
  },
  {
    label: 'Cluster',
    items: [
      { to: '/nodes', label: 'Nodes', need: 'read' },
      { to: '/ha', label: 'High availability', need: 'read' },
    ],
  },
  {
    label: 'Access',
    items: [
      { to: '/users', label: 'Users', need: 'edit' },
      { to: '/tokens', label: 'API tokens', need: 'read' },
    ],
  },
];

type Permissions = { canOperate: boolean; canEdit: boolean };

/** The groups with only the items `permissions` may use; a group left empty is dropped. */
export function visibleNav(permissions: Permissions): NavGroup[] {
  const allowed = (need: NavNeed) => (need === 'operate' ? permissions.canOperate : need === 'edit' ? permissions.canEdit : true);
  return NAV_GROUPS.map((group) => ({ ...group, items: group.items.filter((item) => allowed(item.need)) })).filter((group) => group.items.length > 0);
}
