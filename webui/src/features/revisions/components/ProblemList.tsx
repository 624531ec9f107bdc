import { Link } from 'react-router-dom';
import type { PublishProblem } from '../types';

// How each kind of object is named, and where the console shows it (its own page when the
// API gave its id and it has one, else its list).
const OBJECTS: Record<string, { label: string; list: string; detail?: string }> = {
  'virtual-service': { label: 'Virtual service', list: '/services', detail: '/services' },
  pool: { label: 'Pool', list: '/pools', detail: '/pools' },
  certificate: { label: 'Certificate', list: '/certificates' },
  'ha-group': { label: 'HA group', list: '/ha' },
  node: { label: 'Node', list: '/nodes' },
  'ipvs-sync': { label: 'IPVS sync', list: '/nodes' },
};

function objectLink(problem: PublishProblem): { label: string; to: string } | null {
  const kind = problem.object ? OBJECTS[problem.object] : undefined;
  if (!kind) return null;
  const label = problem.name ? `${kind.label} ${problem.name}` : kind.label;
  return { label, to: kind.detail && problem.id !== null ? `${kind.detail}/${problem.id}` : kind.list };
}

/**
 * Problems, each under the object and field it concerns, linked to the object. A daemon's
 * complaint is quoted in its own words, with the daemon and the node whose files it refused.
 */
export function ProblemList({ problems }: { problems: readonly PublishProblem[] }) {
  return (
    <ul className="problems">
      {problems.map((problem, index) => {
        const object = objectLink(problem);
        return (
          <li key={`${problem.path}-${index}`}>
            <span className="problem-object">
              {object ? <Link to={object.to}>{object.label}</Link> : <code>{problem.path}</code>}
              {object && problem.field ? <code>{problem.field}</code> : null}
            </span>
            {problem.daemon_message ? (
              <span className="problem-said">
                {problem.daemon} on {problem.node} said: <q>{problem.daemon_message}</q>
              </span>
            ) : (
              <span>{problem.message}</span>
            )}
          </li>
        );
      })}
    </ul>
  );
}
