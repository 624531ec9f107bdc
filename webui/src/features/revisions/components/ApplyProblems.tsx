import { Alert, ScrollText } from '@/components';
import type { PublishError } from '../types';
import { ProblemList } from './ProblemList';

type ApplyProblemsProps = {
  error: PublishError;
  /** What was refused, before the API's detail ("Not applied"). */
  title?: string;
  /** What it means and what to do. */
  intro?: string;
};

/** Why an apply (or a rollback) was refused: each object at fault, as the compiler or a daemon said it. */
export function ApplyProblems({
  error,
  title = 'Not applied',
  intro = 'Nothing was published; the nodes keep running the previous revision. Fix these and apply again:',
}: ApplyProblemsProps) {
  const daemon = error.problems.find((p) => p.daemon)?.daemon ?? 'the daemon';
  return (
    <Alert tone="error" title={`${title}: ${error.detail}`}>
      <p>{intro}</p>
      <ProblemList problems={error.problems} />
      {error.daemon_output ? (
        <details className="daemon-output">
          <summary>Everything {daemon} said</summary>
          <ScrollText label={`What ${daemon} said`} className="message" text={error.daemon_output} />
        </details>
      ) : null}
    </Alert>
  );
}
