/**
 * The browser tab's title for each route ("Pools · Fulcrum"), set as soon as the router moves,
 * so screen readers and history show where one is even while the page loads. A page's own
 * PageHeader then refines it with what it shows ("Pool web · Fulcrum").
 */
const TITLES: Record<string, string> = {
  '/sign-in': 'Sign in',
  '': 'Dashboard',
  services: 'Virtual services',
  'services/new': 'New virtual service',
  'services/new/full': 'New virtual service',
  'services/:id': 'Virtual service',
  'services/:id/edit': 'Edit virtual service',
  pools: 'Pools',
  'pools/new': 'New pool',
  'pools/:id': 'Pool',
  certificates: 'Certificates',
  revisions: 'Apply & history',
  'revisions/:id': 'Revision',
  nodes: 'Nodes',
  ha: 'High availability',
  audit: 'Audit log',
  users: 'Users',
  tokens: 'API tokens',
  account: 'Your account',
  '*': 'Page not found',
};

type Match = { route: { path?: string; index?: boolean } };

/** The title of the deepest matched route, or just "Fulcrum" when it has none. */
export function titleFor(matches: readonly Match[]): string {
  const route = matches.at(-1)?.route;
  const title = route ? TITLES[route.index ? '' : (route.path ?? '')] : undefined;
  return title ? `${title} · Fulcrum` : 'Fulcrum';
}

/** Whether a route's path has a title here (a test keeps every route covered). */
export function hasTitle(route: Match['route']): boolean {
  return (route.index ? '' : (route.path ?? '')) in TITLES;
}

type RouterState = { matches: readonly Match[]; location: { pathname: string } };
type TitledRouter = { state: RouterState; subscribe: (listener: (state: RouterState) => void) => () => void };

/**
 * Keeps document.title in step with `router`; returns the unsubscribe. Only a new path
 * resets it: a changed query string (a filter) keeps the title the page gave itself.
 */
export function syncDocumentTitle(router: TitledRouter): () => void {
  let pathname = router.state.location.pathname;
  document.title = titleFor(router.state.matches);
  return router.subscribe((state) => {
    if (state.location.pathname === pathname) return;
    pathname = state.location.pathname;
    document.title = titleFor(state.matches);
  });
}
