import { useState } from 'react';
import { Badge, Button } from '@/components';
import { formatDateTime } from '@/lib/format';
import type { AuditEntry } from '../types';
import { AuditEntryDetails } from './AuditEntryDetails';

const COLUMNS = 6;

function Outcome({ status }: { status: number | null }) {
  if (status === null) return <span className="muted">—</span>;
  return <Badge tone={status >= 400 ? 'danger' : 'success'}>{status}</Badge>;
}

export function AuditRow({ entry }: { entry: AuditEntry }) {
  const [open, setOpen] = useState(false);
  const detailsId = `audit-entry-${entry.id}`;
  const object = [entry.object_type, entry.object_name].filter(Boolean).join(' ');
  return (
    <>
      <tr>
        <td className="nowrap">
          <time dateTime={entry.time}>{formatDateTime(entry.time)}</time>
        </td>
        <th scope="row">
          {entry.actor || <span className="muted">nobody</span>}
          {entry.token ? <div className="cell-note">token {entry.token}</div> : null}
        </th>
        <td>{entry.action}</td>
        <td>{object || <span className="muted">—</span>}</td>
        <td>
          <Outcome status={entry.status} />
        </td>
        <td className="cell-actions">
          <Button size="small" variant="ghost" aria-expanded={open} aria-controls={detailsId} onClick={() => setOpen((o) => !o)} aria-label={`Details of ${entry.action} ${object} at ${formatDateTime(entry.time)}`}>
            {open ? 'Hide' : 'Details'}
          </Button>
        </td>
      </tr>
      {open ? (
        <tr id={detailsId}>
          <td colSpan={COLUMNS}>
            <AuditEntryDetails entry={entry} />
          </td>
        </tr>
      ) : null}
    </>
  );
}
