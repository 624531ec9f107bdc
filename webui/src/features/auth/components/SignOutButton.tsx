import { useNavigate } from 'react-router-dom';
import { Button } from '@/components';
import { useCurrentUser, useSignOut } from '../hooks/useSession';

export function SignOutButton() {
  const user = useCurrentUser();
  const signOut = useSignOut();
  const navigate = useNavigate();
  return (
    <div className="user-menu">
      <span className="user-name" title="Signed in">
        {user.data?.username}
      </span>
      <Button
        variant="ghost"
        size="small"
        busy={signOut.isPending}
        onClick={() => signOut.mutate(undefined, { onSettled: () => navigate('/sign-in', { replace: true }) })}
      >
        Sign out
      </Button>
    </div>
  );
}
