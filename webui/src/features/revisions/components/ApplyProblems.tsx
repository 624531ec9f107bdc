import { Link } from 'react-router-dom';
import { Alert } from '@/components';
import type { PublishError } from '../types';

// The first segment of a problem's path names the kind of object; link to its list.
const SECTIONS: Record<string, string> = {
  'virtual-services': '/services',
  pools: '/pools',
  nodes: '/nodes',
  'ha-groups': '/ha',
  'ipvs-sync': '/nodes',
};

function sectionLink(path: string): string | undefined {
  return SECTIONS[path.split('/')[0] ?? ''];
}

type ApplyProblemsProps = {
  error: PublishError;
  /** What was refused, before the API's detail ("Not applied"). */
  title?: string;
  /** What it means and what to do. */
  intro?: string;
};

/** Why an apply (or a rollback) was refused: one line per object path, as the compiler or HAProxy said it. */
export function ApplyProblems({
  error,
  title = 'Not applied',
  intro = 'Nothing was published; the nodes keep running the previous revision. Fix these and apply again:',
}: ApplyProblemsProps) {
  return (
    <Alert tone="error" title={`${title}: ${error.detail}`}>
      <p>{intro}</p>
      <ul className="problems">
        {error.problems.map((problem, index) => {
          const to = sectionLink(problem.path);
          return (
            <li key={`${problem.path}-${index}`}>
              <code>{to ? <Link to={to}>{problem.path}</Link> : problem.path}</code>
              <span>{problem.message}</span>
            </li>
          );
        })}
      </ul>
    </Alert>
  );
}
