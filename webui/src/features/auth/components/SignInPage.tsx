import { Navigate, useNavigate, useSearchParams } from 'react-router-dom';
import { LoadingState } from '@/components';
import { useCurrentUser, useSignIn } from '../hooks/useSession';
import { SignInForm } from './SignInForm';

/** Only same-site paths are followed after sign-in (no open redirect through ?next=). */
function safeNext(next: string | null): string {
  return next && next.startsWith('/') && !next.startsWith('//') ? next : '/';
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
