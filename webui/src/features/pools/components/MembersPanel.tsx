import { useState } from 'react';
import { Alert, Badge, type BadgeTone, Button, ConfirmButton, EmptyState, Panel } from '@/components';
import { errorMessage } from '@/lib/api';
import { formatEndpoint } from '@/lib/format';
import { useDeleteMember, useSaveMember } from '../hooks/usePools';
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

function MemberRow({ member, onEdit, feedback }: { member: Member; onEdit: () => void; feedback: boolean }) {
  const remove = useDeleteMember();
  const state = member.state ?? 'enabled';
  const limits = [
    member.backup ? 'backup' : null,
    member.max_connections ? `max ${member.max_connections} conn` : null,
    member.min_connections ? `takes new ones below ${member.min_connections}` : null,
    member.slowstart_ms ? `slow start ${member.slowstart_ms} ms` : null,
    member.forwarding ? `forwarded by ${member.forwarding}` : null,
  ].filter(Boolean);
  return (
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
      {feedback ? <LiveCells live={member.live} /> : null}
      <td>
        <MemberRuntimeControls member={member} />
      </td>
      <td className="cell-actions">
        <Button variant="ghost" size="small" onClick={onEdit} aria-label={`Edit member ${member.name}`}>
          Edit
        </Button>
        <ConfirmButton size="small" subject={`member ${member.name}`} busy={remove.isPending} onConfirm={() => remove.mutate(member.id)}>
          Delete
        </ConfirmButton>
        {remove.isError ? <Alert tone="error">{errorMessage(remove.error)}</Alert> : null}
      </td>
    </tr>
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
      {pool.members.length === 0 ? (
        <EmptyState title="No members yet">
          <p>Add the real servers that answer this pool's traffic.</p>
        </EmptyState>
      ) : (
        <div className="table-wrap">
          <table className="table">
            <caption className="visually-hidden">Members of {pool.name}</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Endpoint</th>
                <th scope="col">Weight</th>
                <th scope="col">State</th>
                {feedback ? (
                  <>
                    <th scope="col">Load</th>
                    <th scope="col">Connections</th>
                  </>
                ) : null}
                <th scope="col">Live (no apply needed)</th>
                <th scope="col"><span className="visually-hidden">Actions</span></th>
              </tr>
            </thead>
            <tbody>
              {pool.members.map((member) => (
                <MemberRow key={member.id} member={member} feedback={feedback} onEdit={() => setEditingId(member.id)} />
              ))}
            </tbody>
          </table>
        </div>
      )}
      <MemberEditor pool={pool} member={editing} layer={layer} onDone={() => setEditingId(null)} />
    </Panel>
  );
}
