import { useDeferredValue, useState } from 'react';
import { Link } from 'react-router-dom';
import { Button, ButtonLink, EmptyState, TextField } from '@/components';
import { usePermissions } from '@/features/auth';
import { ServiceFigures, type ServiceOverview, ServiceStateBadge } from '@/features/telemetry';
import { formatEndpoint } from '@/lib/format';

/** Tiles drawn at once; more on request, so a thousand services stay quick to filter. */
export const TILE_PAGE = 48;

/** Matches the name, address, port, protocol or state, case-insensitively. */
export function matchesFilter(service: ServiceOverview, filter: string): boolean {
  const words = filter.trim().toLowerCase().split(/\s+/).filter(Boolean);
  const text = [service.name, formatEndpoint(service.vip, service.port, service.port_end), service.protocol, service.layer, service.state]
    .join(' ')
    .toLowerCase();
  return words.every((word) => text.includes(word));
}

const countOf = (n: number) => `${n} virtual ${n === 1 ? 'service' : 'services'}`;

function ServiceTile({ service }: { service: ServiceOverview }) {
  const headingId = `service-tile-${service.id}`;
  return (
    <li className="tile">
      <article aria-labelledby={headingId}>
        <div className="tile-header">
          <h3 id={headingId}>
            <Link to={`/services/${service.id}`}>{service.name}</Link>
          </h3>
          <ServiceStateBadge state={service.state} />
        </div>
        <p className="tile-meta">
          <span className="mono">{formatEndpoint(service.vip, service.port, service.port_end)}</span> {service.protocol.toUpperCase()}
          {' · '}
          <span>
            members up {service.members_up}/{service.members_total}
          </span>
        </p>
        <ServiceFigures service={service} />
      </article>
    </li>
  );
}

function NoServices() {
  const { canEdit } = usePermissions();
  return (
    <EmptyState title="No virtual services yet">
      {canEdit ? (
        <>
          <p>A virtual service is an address and port that clients connect to, balanced over a pool of servers.</p>
          <ButtonLink to="/services/new" variant="primary">
            Create a virtual service
          </ButtonLink>
        </>
      ) : (
        <p>An administrator creates them; they appear here with their live figures.</p>
      )}
    </EmptyState>
  );
}

/** A tile per virtual service with its state, members and last hour; filterable. */
export function ServiceTiles({ services }: { services: readonly ServiceOverview[] }) {
  const [filter, setFilter] = useState('');
  const [shown, setShown] = useState(TILE_PAGE);
  const deferred = useDeferredValue(filter);
  if (services.length === 0) return <NoServices />;
  const matching = deferred ? services.filter((s) => matchesFilter(s, deferred)) : services;
  const visible = matching.slice(0, shown);
  return (
    <>
      <div className="filters">
        <TextField
          label="Filter services"
          type="search"
          value={filter}
          onChange={(event) => {
            setFilter(event.target.value);
            setShown(TILE_PAGE);
          }}
          hint="Name, address, protocol or state (up, degraded, down…)."
        />
      </div>
      <p role="status" className="muted">
        {matching.length === services.length ? `${countOf(services.length)}.` : `${matching.length} of ${countOf(services.length)} match.`}
      </p>
      {matching.length === 0 ? (
        <EmptyState title="No virtual service matches">
          <Button variant="ghost" onClick={() => setFilter('')}>
            Clear the filter
          </Button>
        </EmptyState>
      ) : (
        <ul className="tiles" aria-label="Virtual services">
          {visible.map((service) => (
            <ServiceTile key={service.id} service={service} />
          ))}
        </ul>
      )}
      {matching.length > visible.length ? (
        <Button onClick={() => setShown((n) => n + TILE_PAGE)}>Show {Math.min(TILE_PAGE, matching.length - visible.length)} more</Button>
      ) : null}
    </>
  );
}
