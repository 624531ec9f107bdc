import { ScrollText, TableWrap } from '@/components';
import { type AuditEntry, type FieldChange, fieldChanges, relatedChanges } from '../types';

function Value({ value }: { value: unknown }) {
  if (value === undefined) return <span className="muted">—</span>;
  if (value === '' || value === null) return <span className="muted">empty</span>;
  return <code>{typeof value === 'string' ? value : JSON.stringify(value)}</code>;
}

function ChangesTable({ caption, changes }: { caption: string; changes: FieldChange[] }) {
  if (changes.length === 0) return <p className="muted">No field changed.</p>;
  const plain = changes.every((c) => 'value' in c);
  return (
    <TableWrap label="Field changes">
      <table className="table table-compact">
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Field</th>
            {plain ? (
              <th scope="col">Value</th>
            ) : (
              <>
                <th scope="col">Before</th>
                <th scope="col">After</th>
              </>
            )}
          </tr>
        </thead>
        <tbody>
          {changes.map((change) => (
            <tr key={change.field}>
              <th scope="row" className="mono">
                {change.field}
              </th>
              {plain ? (
                <td>
                  <Value value={change.value} />
                </td>
              ) : (
                <>
                  <td>
                    <Value value={'value' in change ? undefined : change.before} />
                  </td>
                  <td>
                    <Value value={'value' in change ? change.value : change.after} />
                  </td>
                </>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}

/** What one entry recorded: the request, the field diff, other objects changed, the body asked. */
export function AuditEntryDetails({ entry }: { entry: AuditEntry }) {
  const related = relatedChanges(entry.related);
  return (
    <div className="stack audit-details">
      <p className="mono">
        {entry.method ? `${entry.method} ${entry.path}` : 'No request (an event)'}
        {entry.address ? ` from ${entry.address}` : ''}
        {entry.token ? ` with API token ${entry.token}` : ''}
      </p>
      {entry.detail ? <p>{entry.detail}</p> : null}
      <div>
        <h3>Changes</h3>
        <ChangesTable caption={`Changes of entry ${entry.id}`} changes={fieldChanges(entry.action, entry.changes)} />
      </div>
      {related.map((item, index) => (
        <div key={index}>
          <h3>
            Also {item.action}: {item.object_type} {item.object_name}
          </h3>
          <ChangesTable caption={`Changes of ${item.object_type} ${item.object_name}`} changes={fieldChanges(item.action, item.changes)} />
        </div>
      ))}
      {entry.body !== null && entry.body !== undefined ? (
        <div>
          <h3>Request body</h3>
          <ScrollText label={`Request body of entry ${entry.id}`} className="mono audit-body" text={JSON.stringify(entry.body, null, 2)} />
        </div>
      ) : null}
    </div>
  );
}
