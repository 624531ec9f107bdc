import { Link, useLocation, useNavigate } from 'react-router-dom';
import { Alert } from './Alert';
import { Button } from './Button';

/** What a page that saved configuration passes to the next one: `navigate(to, { state: { pendingChange } })`. */
export type PendingChangeState = { pendingChange?: string };

/**
 * After a create or save, says on the page it led to that the change waits to be applied
 * (stored, not on the nodes yet), with the way to apply it. Gone once dismissed.
 */
export function PendingChangeNotice() {
  const location = useLocation();
  const navigate = useNavigate();
  const message = (location.state as PendingChangeState | null)?.pendingChange;
  if (!message) return null;
  const dismiss = () => navigate(`${location.pathname}${location.search}${location.hash}`, { replace: true, state: null });
  return (
    <div className="pending-change-notice">
      <Alert tone="success" title={message}>
        <p>
          The change is pending until applied: review and apply it on <Link to="/revisions">Apply &amp; history</Link>.{' '}
          <Button variant="ghost" size="small" onClick={dismiss}>
            Dismiss
          </Button>
        </p>
      </Alert>
    </div>
  );
}
