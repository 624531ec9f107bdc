export { ReadOnlyBanner } from './components/ReadOnlyBanner';
export { RequireAuth } from './components/RequireAuth';
export { SignInPage } from './components/SignInPage';
export { SignOutButton } from './components/SignOutButton';
export { type Role, usePermissions } from './hooks/usePermissions';
export { useCurrentUser } from './hooks/useSession';
