import { Fragment, useMemo, useState } from 'react';
import { Link } from 'react-router-dom';
import { ActionsHeader, Alert, Badge, type BadgeTone, Button, ConfirmButton, EmptyState, ErrorState, LoadingState, Panel, TableWrap } from '@/components';
import { usePermissions } from '@/features/auth';
import {
  type AlignedSeries,
  alignSeries,
  HealthEventsTable,
  type MemberHealth,
  MemberHealthSummary,
  MemberTraffic,
  useHealth,
  useMemberMetrics,
} from '@/features/telemetry';
import { errorMessage } from '@/lib/api';
import { formatEndpoint } from '@/lib/format';
import { useDeleteMember, usePool, useSaveMember } from '../hooks/usePools';
import {
  type Member,
  type MemberFormValues,
  type MemberState,
  type Pool,
  type PoolLayer,
  toMemberForm,
  toMemberRequest,
  usesFeedback,
} from '../types';
import { MemberForm } from './MemberForm';
import { MemberRuntimeControls } from './MemberRuntimeControls';

const STATE_TONE: Record<MemberState, BadgeTone> = { enabled: 'success', drain: 'warning', disabled: 'neutral' };

type Live = Member['live'][number];

/** A load of 1000 is one fully busy server: shown as a share, above 100 % when work queues. */
const formatLoad = (milli: number | null) => (milli === null ? 'unknown' : `${Math.round(milli / 10)} %`);

/** The member's load and connections on each node, as the node agents last reported them. */
function LiveCells({ live }: { live: readonly Live[] }) {
  if (live.length === 0) {
    return (
      <>
        <td className="cell-note">no report</td>
        <td className="cell-note">no report</td>
      </>
    );
  }
  const node = (l: Live) => (live.length > 1 ? `${l.node}: ` : '');
  return (
    <>
      <td>
        {live.map((l) => (
          <div key={l.node} title={l.message || undefined}>
            {node(l)}
            {formatLoad(l.load_milli)}
            {l.message ? <div className="cell-note">{l.message}</div> : null}
          </div>
        ))}
      </td>
      <td>
        {live.map((l) => (
          <div key={l.node}>
            {node(l)}
            {l.connections ?? 'unknown'}
            {l.weight !== null ? <span className="cell-note"> (weight {l.weight})</span> : null}
          </div>
        ))}
      </td>
    </>
  );
}

/** Which mechanism carries the loads to the scheduler, per node. */
function feedSummary(members: readonly Member[]): string | null {
  const feeds = new Map<string, Set<string>>();
  for (const l of members.flatMap((m) => m.live)) {
    if (!l.feed) continue;
    feeds.set(l.feed, (feeds.get(l.feed) ?? new Set()).add(l.node));
  }
  if (feeds.size === 0) return null;
  const words: Record<string, string> = {
    ip_vs_dllc: 'the ip_vs_dllc kernel module',
    'haproxy agent-check': "HAProxy's agent-check (leastconn with load-derived weights)",
  };
  return [...feeds]
    .map(([feed, nodes]) => `${[...nodes].sort().join(', ')}: ${words[feed] ?? `${feed} (the ip_vs_dllc module is missing; least connection with load-derived weights stands in)`}`)
    .join('; ');
}

/** What a row shows besides the member itself: live figures and what the signed-in role may do. */
type RowContext = { feedback: boolean; canOperate: boolean; canEdit: boolean; columns: number };

function MemberActions({ member, onEdit }: { member: Member; onEdit: () => void }) {
  const remove = useDeleteMember();
  return (
    <td className="cell-actions">
      <Button variant="ghost" size="small" onClick={onEdit} aria-label={`Edit member ${member.name}`}>
        Edit
      </Button>
      <ConfirmButton size="small" subject={`member ${member.name}`} busy={remove.isPending} onConfirm={() => remove.mutate(member.id)}>
        Delete
      </ConfirmButton>
      {remove.isError ? <Alert tone="error">{errorMessage(remove.error)}</Alert> : null}
    </td>
  );
}

type RowProps = { member: Member; health: readonly MemberHealth[]; traffic: AlignedSeries | null; context: RowContext; onEdit?: () => void };

function MemberRow({ member, health, traffic, context, onEdit }: RowProps) {
  const [history, setHistory] = useState(false);
  const state = member.state ?? 'enabled';
  const historyId = `member-history-${member.id}`;
  const limits = [
    member.backup ? 'backup' : null,
    member.max_connections ? `max ${member.max_connections} conn` : null,
    member.min_connections ? `takes new ones below ${member.min_connections}` : null,
    member.slowstart_ms ? `slow start ${member.slowstart_ms} ms` : null,
    member.forwarding ? `forwarded by ${member.forwarding}` : null,
  ].filter(Boolean);
  return (
    <Fragment>
      <tr>
        <th scope="row">
          {member.name}
          {limits.length ? <div className="cell-note">{limits.join(', ')}</div> : null}
        </th>
        <td className="mono">{formatEndpoint(member.address, member.port)}</td>
        <td>{member.weight ?? 1}</td>
        <td>
          <Badge tone={STATE_TONE[state]}>{state}</Badge>
        </td>
        <td>
          <MemberHealthSummary rows={health} />
          <Button
            variant="ghost"
            size="small"
            aria-expanded={history}
            aria-controls={historyId}
            aria-label={`${history ? 'Hide history' : 'History'} of ${member.name}`}
            onClick={() => setHistory(!history)}
          >
            {history ? 'Hide history' : 'History'}
          </Button>
        </td>
        {context.feedback ? <LiveCells live={member.live} /> : null}
        <td>
          <MemberTraffic name={member.name} series={traffic} />
        </td>
        {context.canOperate ? (
          <td>
            <MemberRuntimeControls member={member} />
          </td>
        ) : null}
        {context.canEdit && onEdit ? <MemberActions member={member} onEdit={onEdit} /> : null}
      </tr>
      {history ? (
        <tr className="history-row" id={historyId}>
          <td colSpan={context.columns}>
            <HealthEventsTable memberId={member.id} memberName={member.name} />
          </td>
        </tr>
      ) : null}
    </Fragment>
  );
}

/** Each member's health rows (one per node) and its traffic series, keyed by member id. */
function useMemberTelemetry(pool: number) {
  const health = useHealth({ pool });
  const metrics = useMemberMetrics(pool);
  const byMember = useMemo(() => {
    const rows = new Map<number, MemberHealth[]>();
    for (const row of health.data ?? []) rows.set(row.member, [...(rows.get(row.member) ?? []), row]);
    return rows;
  }, [health.data]);
  const traffic = useMemo(() => {
    const data = metrics.data;
    return new Map(data?.series.map((series) => [series.id, alignSeries(data, series)]) ?? []);
  }, [metrics.data]);
  return { byMember, traffic, error: health.error ?? metrics.error };
}

type MembersTableProps = { pool: Pool; onEdit?: (id: number) => void };

/**
 * The pool's members with their health on each node (the reason when down, and its history),
 * their traffic, and one-click enable / drain / disable for operators.
 */
export function MembersTable({ pool, onEdit }: MembersTableProps) {
  const { canOperate, canEdit } = usePermissions();
  const feedback = usesFeedback(pool.algorithm ?? 'round-robin');
  const telemetry = useMemberTelemetry(pool.id);
  const editable = canEdit && onEdit !== undefined;
  const context: RowContext = { feedback, canOperate, canEdit, columns: 6 + (feedback ? 2 : 0) + (canOperate ? 1 : 0) + (editable ? 1 : 0) };
  if (pool.members.length === 0) {
    return (
      <EmptyState title="No members yet">
        <p>Add the real servers that answer this pool's traffic.</p>
      </EmptyState>
    );
  }
  return (
    <>
      {telemetry.error ? <Alert tone="warning">Health and traffic could not be read: {errorMessage(telemetry.error)}</Alert> : null}
      <TableWrap label="Members">
        <table className="table">
          <caption className="visually-hidden">Members of {pool.name}</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Endpoint</th>
              <th scope="col">Weight</th>
              <th scope="col">State</th>
              <th scope="col">Health</th>
              {feedback ? (
                <>
                  <th scope="col">Load</th>
                  <th scope="col">Connections</th>
                </>
              ) : null}
              <th scope="col">Traffic</th>
              {canOperate ? <th scope="col">Live (no apply needed)</th> : null}
              {editable ? (
                <ActionsHeader />
              ) : null}
            </tr>
          </thead>
          <tbody>
            {pool.members.map((member) => (
              <MemberRow
                key={member.id}
                member={member}
                health={telemetry.byMember.get(member.id) ?? []}
                traffic={telemetry.traffic.get(member.id) ?? null}
                context={context}
                onEdit={onEdit ? () => onEdit(member.id) : undefined}
              />
            ))}
          </tbody>
        </table>
      </TableWrap>
    </>
  );
}

type EditorProps = { pool: Pool; member?: Member; layer: PoolLayer; onDone: () => void };

function MemberEditor({ pool, member, layer, onDone }: EditorProps) {
  const save = useSaveMember(member?.id);
  const onSubmit = async (values: MemberFormValues) => {
    await save.mutateAsync(toMemberRequest(pool.id, values, layer));
    onDone();
  };
  return (
    <div className="subpanel">
      <h3>{member ? `Edit member ${member.name}` : 'Add a member'}</h3>
      <MemberForm
        key={member?.id ?? 'new'}
        defaultValues={toMemberForm(member)}
        submitLabel={member ? 'Save member' : 'Add member'}
        onSubmit={onSubmit}
        onCancel={member ? onDone : undefined}
        layer={layer}
      />
    </div>
  );
}

export function MembersPanel({ pool, layer = 'unknown' }: { pool: Pool; layer?: PoolLayer }) {
  const { canEdit } = usePermissions();
  const [editingId, setEditingId] = useState<number | null>(null);
  const editing = pool.members.find((m) => m.id === editingId);
  const feedback = usesFeedback(pool.algorithm ?? 'round-robin');
  const feeds = feedback ? feedSummary(pool.members) : null;
  return (
    <Panel title="Members">
      {feedback ? (
        <p className="muted">
          Dynamic least load: loads are read from fulcrum-loadd on each member. {feeds ? `In force on ${feeds}.` : 'No node has reported yet.'}
        </p>
      ) : null}
      <MembersTable pool={pool} onEdit={setEditingId} />
      {canEdit ? <MemberEditor pool={pool} member={editing} layer={layer} onDone={() => setEditingId(null)} /> : null}
    </Panel>
  );
}

/** A pool's members on another page (a service's): the same live table, editing left to the pool's page. */
export function PoolMembers({ poolId }: { poolId: number }) {
  const pool = usePool(poolId);
  const title = pool.data ? `Members of pool ${pool.data.name}` : 'Members';
  return (
    <Panel title={title} actions={<Link to={`/pools/${poolId}`}>Open the pool</Link>}>
      {pool.isPending ? <LoadingState /> : null}
      {pool.isError ? <ErrorState error={pool.error} onRetry={() => void pool.refetch()} /> : null}
      {pool.data ? <MembersTable pool={pool.data} /> : null}
    </Panel>
  );
}
