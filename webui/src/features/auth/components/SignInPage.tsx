import { Navigate, useNavigate, useSearchParams } from 'react-router-dom';
import { Alert, LoadingState } from '@/components';
import { useCurrentUser, useMembership, useSignIn } from '../hooks/useSession';
import { ReadOnlyBanner } from './ReadOnlyBanner';
import { SignInForm } from './SignInForm';

/** Only same-site paths are followed after sign-in (no open redirect through ?next=). */
function safeNext(next: string | null): string {
  return next && next.startsWith('/') && !next.startsWith('//') ? next : '/';
}

/**
 * On an appliance that joined another's cluster: the cluster is managed from that console.
 * A read-only appliance's banner already names where changes are made.
 */
function MemberOfCluster() {
  const membership = useMembership();
  const link = membership.data?.member_of;
  if (!link || membership.data?.read_only) return null;
  const node = membership.data?.node;
  return (
    <Alert tone="info" title="Part of a cluster">
      This appliance{node ? ` (node ${node})` : ''} joined a cluster, which is managed from its console: <a href={link}>{link}</a>
    </Alert>
  );
}

export function SignInPage() {
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const user = useCurrentUser();
  const signIn = useSignIn();
  const next = safeNext(params.get('next'));

  if (user.isPending) return <LoadingState label="Checking your session…" />;
  if (user.data) return <Navigate to={next} replace />;

  return (
    <main className="sign-in">
      <div className="sign-in-card">
        <div className="brand brand-large">
          <span className="brand-mark" aria-hidden="true" />
          Fulcrum
        </div>
        <h1>Sign in</h1>
        <p className="muted">Load-balancer console</p>
        <ReadOnlyBanner />
        <MemberOfCluster />
        <SignInForm
          onSubmit={async (values) => {
            await signIn.mutateAsync(values);
            navigate(next, { replace: true });
          }}
        />
      </div>
    </main>
  );
}
