import { useState } from 'react';
import { ActionsHeader, Alert, Badge, Button, ConfirmButton, EmptyState, ErrorState, LoadingState, Panel, TableWrap } from '@/components';
import { usePermissions } from '@/features/auth';
import { errorMessage } from '@/lib/api';
import { useDeleteRule, useMoveRule, useRules, useSaveRule, useSetRuleEnabled } from '../hooks/useRules';
import {
  describeAction,
  describeConditions,
  emptyRuleForm,
  isTerminalAction,
  type PoolChoice,
  type Rule,
  type RuleFormValues,
  isHttpProtocol,
  toRuleForm,
  toRuleRequest,
  type VirtualService,
} from '../types';
import { RuleForm } from './RuleForm';

type RowProps = {
  rule: Rule;
  index: number;
  count: number;
  serviceId: number;
  poolName: (id: number) => string;
  /** Absent for those who may not change rules: the row then only reads. */
  onEdit?: () => void;
};

function RuleRow({ rule, index, count, serviceId, poolName, onEdit }: RowProps) {
  const move = useMoveRule(serviceId);
  const toggle = useSetRuleEnabled(serviceId);
  const remove = useDeleteRule(serviceId);
  const enabled = rule.enabled ?? true;
  const error = move.error ?? toggle.error ?? remove.error;
  const busy = move.isPending || toggle.isPending;
  const badge = enabled ? <Badge tone="success">on</Badge> : <Badge tone="neutral">off</Badge>;
  return (
    <tr className={enabled ? undefined : 'rule-disabled'}>
      <td className="mono">{index + 1}</td>
      <th scope="row">{rule.name}</th>
      <td className="rule-summary">{describeConditions(rule.conditions)}</td>
      <td className="rule-summary">
        {describeAction(rule, poolName)}
        {isTerminalAction(rule.action) ? null : <div className="cell-note">then goes on</div>}
      </td>
      <td>
        {onEdit ? (
          <label className="nowrap">
            <input
              type="checkbox"
              checked={enabled}
              disabled={busy}
              onChange={(event) => toggle.mutate({ id: rule.id, enabled: event.target.checked })}
              aria-label={`Rule ${rule.name} enabled`}
            />{' '}
            {badge}
          </label>
        ) : (
          badge
        )}
      </td>
      {onEdit ? (
        <td className="cell-actions">
          <Button variant="ghost" size="small" disabled={busy || index === 0} onClick={() => move.mutate({ id: rule.id, position: index - 1 })} aria-label={`Move rule ${rule.name} up`}>
            ↑ Up
          </Button>
          <Button variant="ghost" size="small" disabled={busy || index === count - 1} onClick={() => move.mutate({ id: rule.id, position: index + 1 })} aria-label={`Move rule ${rule.name} down`}>
            ↓ Down
          </Button>
          <Button variant="ghost" size="small" onClick={onEdit} aria-label={`Edit rule ${rule.name}`}>
            Edit
          </Button>
          <ConfirmButton size="small" subject={`rule ${rule.name}`} busy={remove.isPending} onConfirm={() => remove.mutate(rule.id)}>
            Delete
          </ConfirmButton>
          {error ? <Alert tone="error">{errorMessage(error)}</Alert> : null}
        </td>
      ) : null}
    </tr>
  );
}

function RuleEditor({ serviceId, rule, pools, onDone }: { serviceId: number; rule?: Rule; pools: readonly PoolChoice[]; onDone: () => void }) {
  const save = useSaveRule(serviceId, rule?.id);
  const onSubmit = async (values: RuleFormValues) => {
    await save.mutateAsync(toRuleRequest(serviceId, values));
    onDone();
  };
  return (
    <div className="subpanel">
      <h3>{rule ? `Edit rule ${rule.name}` : 'Add a rule'}</h3>
      {rule ? null : <p className="muted">A new rule goes to the end of the list; move it up to evaluate it earlier.</p>}
      <RuleForm
        key={rule?.id ?? 'new'}
        defaultValues={rule ? toRuleForm(rule) : emptyRuleForm()}
        pools={pools}
        submitLabel={rule ? 'Save rule' : 'Add rule'}
        onSubmit={onSubmit}
        onCancel={rule ? onDone : undefined}
      />
    </div>
  );
}

type TableProps = { service: VirtualService; rules: readonly Rule[]; pools: readonly PoolChoice[]; onEdit?: (id: number) => void };

function RulesTable({ service, rules, pools, onEdit }: TableProps) {
  const poolName = (id: number) => pools.find((pool) => pool.id === id)?.name ?? `#${id}`;
  return (
    <TableWrap label="Rules">
      <table className="table">
        <caption className="visually-hidden">Rules of {service.name}</caption>
        <thead>
          <tr>
            <th scope="col">#</th>
            <th scope="col">Name</th>
            <th scope="col">When</th>
            <th scope="col">Then</th>
            <th scope="col">Enabled</th>
            {onEdit ? <ActionsHeader /> : null}
          </tr>
        </thead>
        <tbody>
          {rules.map((rule, index) => (
            <RuleRow key={rule.id} rule={rule} index={index} count={rules.length} serviceId={service.id} poolName={poolName} onEdit={onEdit && (() => onEdit(rule.id))} />
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}

/** Content switching: the service's rules in evaluation order, first terminal match wins. */
export function RulesPanel({ service, pools }: { service: VirtualService; pools: readonly PoolChoice[] }) {
  const rules = useRules(service.id);
  const [editingId, setEditingId] = useState<number | null>(null);
  const editing = rules.data?.find((rule) => rule.id === editingId);
  const layer7 = isHttpProtocol(service.protocol);
  const { canEdit } = usePermissions();
  return (
    <Panel title="Rules">
      <p className="muted">
        Evaluated top to bottom: the first matching rule that sends, redirects or denies wins; header rules apply and evaluation goes on.
        Requests no rule takes go to the service's pool.
      </p>
      {rules.isPending ? <LoadingState /> : null}
      {rules.isError ? <ErrorState error={rules.error} onRetry={() => void rules.refetch()} /> : null}
      {rules.data?.length === 0 ? (
        <EmptyState title="No rules">
          <p>{layer7 ? 'Every request goes to the service’s pool.' : 'Content-switching rules need an HTTP or HTTPS service.'}</p>
        </EmptyState>
      ) : null}
      {rules.data?.length ? <RulesTable service={service} rules={rules.data} pools={pools} onEdit={canEdit ? setEditingId : undefined} /> : null}
      {layer7 && canEdit ? <RuleEditor serviceId={service.id} rule={editing} pools={pools} onDone={() => setEditingId(null)} /> : null}
    </Panel>
  );
}
