import { useState } from 'react';
import { useSearchParams } from 'react-router-dom';
import { ButtonLink, CheckboxField, EmptyState, ErrorState, LoadingState, PageHeader, Pager, Panel, TableWrap } from '@/components';
import { usePermissions } from '@/features/auth';
import { fieldErrors } from '@/lib/api';
import { formatDateTime } from '@/lib/format';
import { useAuditPage } from '../hooks/useAudit';
import { AUDIT_PAGE_SIZE, type AuditFilters, exportUrl, filtersFrom, FOLLOW_MS, toQuery, toSearchParams } from '../types';
import { AuditFilterForm } from './AuditFilterForm';
import { AuditRow } from './AuditRow';

function ExportLinks({ filters }: { filters: AuditFilters }) {
  return (
    <span className="inline-list">
      <a className="button button-small" href={exportUrl(filters, 'csv')} download>
        Export CSV
      </a>
      <a className="button button-small" href={exportUrl(filters, 'jsonl')} download>
        Export JSON Lines
      </a>
    </span>
  );
}

function AuditLog() {
  const [params, setParams] = useSearchParams();
  const filters = filtersFrom(params);
  const query = toQuery(filters);
  const [offset, setOffset] = useState(0);
  const [follow, setFollow] = useState(false);
  const entries = useAuditPage(query, offset, follow);
  const filtered = Object.keys(query).length > 0;
  const apply = (next: AuditFilters) => {
    setOffset(0);
    setParams(toSearchParams(next));
  };
  const count = entries.data?.count ?? 0;
  return (
    <div className="stack">
      <Panel title="Filters">
        {/* A new address (a link to another user's actions) starts a fresh form. */}
        <AuditFilterForm key={params.toString()} applied={filters} onApply={apply} errors={entries.isError ? fieldErrors(entries.error) : {}} />
      </Panel>
      <Panel title="Entries" actions={<ExportLinks filters={filters} />}>
        <CheckboxField
          label="Follow new entries"
          hint={`Shows the newest entries and re-reads them every ${FOLLOW_MS / 1000} s.`}
          checked={follow}
          onChange={(event) => {
            setFollow(event.target.checked);
            if (event.target.checked) setOffset(0);
          }}
        />
        <p className="muted">
          <span role="status">{entries.data ? `${count} ${count === 1 ? 'entry' : 'entries'}${filtered ? ' match the filters' : ''}.` : ''}</span>
          {follow && entries.data ? ` Last read ${formatDateTime(new Date(entries.dataUpdatedAt).toISOString())}.` : ''}
        </p>
        {entries.isPending ? <LoadingState /> : null}
        {entries.isError ? <ErrorState error={entries.error} onRetry={() => void entries.refetch()} /> : null}
        {entries.data && count === 0 ? (
          <EmptyState title={filtered ? 'Nothing matches these filters' : 'Nothing recorded yet'}>
            <p>{filtered ? 'Clear or loosen the filters.' : 'Every change made through the API and every sign-in is recorded here.'}</p>
          </EmptyState>
        ) : null}
        {entries.data && count > 0 ? (
          <>
            <TableWrap label="Audit log">
              <table className="table table-compact">
                <caption className="visually-hidden">Audit log, newest first</caption>
                <thead>
                  <tr>
                    <th scope="col">Time</th>
                    <th scope="col">User</th>
                    <th scope="col">Action</th>
                    <th scope="col">Object</th>
                    <th scope="col">Status</th>
                    <th scope="col">
                      <span className="visually-hidden">Details</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {entries.data.results.map((entry) => (
                    <AuditRow key={entry.id} entry={entry} />
                  ))}
                </tbody>
              </table>
            </TableWrap>
            <Pager offset={offset} count={count} pageSize={AUDIT_PAGE_SIZE} onOffset={setOffset} label="Audit log pages" previous="Newer" next="Older" />
          </>
        ) : null}
      </Panel>
    </div>
  );
}

export function AuditPage() {
  const { role, canOperate } = usePermissions();
  return (
    <>
      <PageHeader
        title="Audit log"
        description="Every change made through the API, the console and the CLI, and every sign-in: who, when, from where, what changed. Entries cannot be changed or deleted."
      />
      {role === undefined ? <LoadingState /> : null}
      {canOperate ? <AuditLog /> : null}
      {role !== undefined && !canOperate ? (
        <EmptyState title="Not allowed">
          <p>Only operators and admins may read the audit log. Ask an admin if you need it.</p>
          <ButtonLink to="/" variant="primary">
            Go to the dashboard
          </ButtonLink>
        </EmptyState>
      ) : null}
    </>
  );
}
