import { useState } from 'react';
import { Alert, Button, Panel, TextField } from '@/components';
import { errorMessage } from '@/lib/api';
import { publishProblems } from '../api/revisionsApi';
import { useRollback } from '../hooks/useRevisions';
import type { Revision } from '../types';
import { ApplyProblems } from './ApplyProblems';
import { ApplyResult } from './ApplyResult';

/**
 * "Roll back to this revision", behind a step that says what happens: a new revision that
 * restores this one's objects, published to every node, replacing unapplied edits too.
 */
export function RollbackPanel({ revision }: { revision: Revision }) {
  const rollback = useRollback();
  const [asking, setAsking] = useState(false);
  const [message, setMessage] = useState('');
  const [published, setPublished] = useState<number>();
  const problems = rollback.isError ? publishProblems(rollback.error) : null;
  const run = () => {
    setPublished(undefined);
    rollback.mutate(
      { id: revision.id, message: message.trim() },
      {
        onSuccess: (created) => {
          setPublished(created.id);
          setAsking(false);
          setMessage('');
        },
      },
    );
  };
  return (
    <Panel title="Roll back">
      {!asking ? (
        <div className="form-actions">
          <Button variant="danger" onClick={() => setAsking(true)}>
            Roll back to this revision
          </Button>
        </div>
      ) : (
        <div className="rollback-confirm" role="group" aria-label={`Roll back to revision ${revision.number}`}>
          <p>
            This publishes a <strong>new revision</strong> that restores the objects of revision {revision.number} (services, pools,
            certificates, nodes, HA groups) and sends it to every node. Edits not applied yet are replaced as well. Later revisions stay
            in the history, and you can roll forward to them the same way.
          </p>
          <TextField
            label="Rollback message"
            placeholder={`rollback to r${revision.number}`}
            value={message}
            maxLength={500}
            onChange={(event) => setMessage(event.target.value)}
          />
          <div className="form-actions">
            <Button variant="danger" busy={rollback.isPending} onClick={run} autoFocus>
              Yes, roll back to revision {revision.number}
            </Button>
            <Button variant="ghost" onClick={() => setAsking(false)}>
              Cancel
            </Button>
          </div>
        </div>
      )}
      {problems ? (
        <ApplyProblems error={problems} title="Not rolled back" intro="Nothing changed; the nodes keep running what they run. The reasons:" />
      ) : null}
      {rollback.isError && !problems ? (
        <Alert tone="error" title="Not rolled back">
          {errorMessage(rollback.error)}
        </Alert>
      ) : null}
      {published !== undefined ? <ApplyResult revisionId={published} /> : null}
    </Panel>
  );
}
