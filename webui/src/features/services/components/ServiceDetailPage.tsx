import type { ReactNode } from 'react';
import { Link, useParams } from 'react-router-dom';
import { Badge, ButtonLink, EmptyState, ErrorState, LoadingState, PageHeader, Panel } from '@/components';
import { usePermissions } from '@/features/auth';
import { ServiceGraphs, ServiceStateBadge, useOverview } from '@/features/telemetry';
import { formatEndpoint } from '@/lib/format';
import { useRules } from '../hooks/useRules';
import { usePoolChoices, useService } from '../hooks/useServices';
import { describeAction, describeConditions, isIpvs, type PoolChoice, type Rule, type VirtualService } from '../types';

const breadcrumb = <Link to="/services">Virtual services</Link>;

/** The service's state and current figures, from the overview the dashboard also reads. */
function LiveState({ serviceId }: { serviceId: number }) {
  const overview = useOverview();
  const live = overview.data?.services.find((s) => s.id === serviceId);
  if (overview.isPending) return <span className="muted">reading the state…</span>;
  if (!live) return <Badge tone="neutral">no report</Badge>;
  return (
    <>
      <ServiceStateBadge state={live.state} />{' '}
      <span className="muted">
        members up {live.members_up}/{live.members_total}
      </span>
    </>
  );
}

function RulesSummary({ service, pools }: { service: VirtualService; pools: readonly PoolChoice[] }) {
  const rules = useRules(service.id);
  const { canEdit } = usePermissions();
  const poolName = (id: number) => pools.find((p) => p.id === id)?.name ?? `#${id}`;
  const edit = canEdit ? <Link to={`/services/${service.id}/edit`}>Edit the rules</Link> : undefined;
  return (
    <Panel title="Rules" actions={edit}>
      {rules.isPending ? <LoadingState /> : null}
      {rules.isError ? <ErrorState error={rules.error} onRetry={() => void rules.refetch()} /> : null}
      {rules.data?.length === 0 ? <EmptyState title="No rules">Every request goes to the pool {poolName(service.default_pool)}.</EmptyState> : null}
      {rules.data?.length ? (
        <ol className="rule-list">
          {rules.data.map((rule: Rule) => (
            <li key={rule.id} className={rule.enabled === false ? 'rule-disabled' : undefined}>
              <strong>{rule.name}</strong>: when {describeConditions(rule.conditions) || 'always'}, {describeAction(rule, poolName)}
              {rule.enabled === false ? ' (off)' : ''}
            </li>
          ))}
        </ol>
      ) : null}
    </Panel>
  );
}

/** The default pool first, then those the rules send to, each once. */
function usedPools(service: VirtualService, rules: readonly Rule[] | undefined): number[] {
  const ids = [service.default_pool, ...(rules ?? []).flatMap((r) => (r.action === 'use_pool' && r.pool != null ? [r.pool] : []))];
  return [...new Set(ids)];
}

type ServiceDetailPageProps = {
  /** A pool's live members table (the pools feature's), wired in by the app. */
  renderPool?: (poolId: number) => ReactNode;
};

/** A virtual service live: its state, its last hour, its rules and its pools' members. */
export function ServiceDetailPage({ renderPool }: ServiceDetailPageProps) {
  const id = Number(useParams().id);
  const service = useService(id);
  const pools = usePoolChoices();
  const layer7 = service.data ? !isIpvs(service.data.forwarding) : false;
  const rules = useRules(id);
  const { canEdit } = usePermissions();
  if (service.isPending) return <LoadingState />;
  if (service.isError) {
    return (
      <>
        <PageHeader title="Virtual service" breadcrumb={breadcrumb} />
        <ErrorState error={service.error} onRetry={() => void service.refetch()} />
      </>
    );
  }
  const data = service.data;
  const poolName = (poolId: number) => pools.data?.find((p) => p.id === poolId)?.name ?? `pool #${poolId}`;
  const poolIds = usedPools(data, layer7 ? rules.data : undefined);
  return (
    <>
      <PageHeader
        title={`Virtual service ${data.name}`}
        breadcrumb={breadcrumb}
        description={
          <>
            <LiveState serviceId={id} /> <span className="mono">{formatEndpoint(data.vip, data.port, data.port_end)}</span> {data.protocol?.toUpperCase()}
            {data.enabled === false ? ' (disabled)' : null} · pool <Link to={`/pools/${data.default_pool}`}>{poolName(data.default_pool)}</Link>
          </>
        }
        actions={
          canEdit ? (
            <ButtonLink to={`/services/${id}/edit`} variant="primary">
              Edit
            </ButtonLink>
          ) : undefined
        }
      />
      <div className="stack">
        <Panel title="Last hour">
          <ServiceGraphs serviceId={id} name={data.name} />
        </Panel>
        {layer7 ? <RulesSummary service={data} pools={pools.data ?? []} /> : null}
        {poolIds.map((poolId) =>
          renderPool ? (
            <div key={poolId}>{renderPool(poolId)}</div>
          ) : (
            <p key={poolId}>
              <Link to={`/pools/${poolId}`}>Members of {poolName(poolId)}</Link>
            </p>
          ),
        )}
      </div>
    </>
  );
}
