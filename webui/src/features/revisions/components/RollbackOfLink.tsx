import { Link } from 'react-router-dom';
import { useRevisionByNumber } from '../hooks/useRevisions';

type RollbackOfLinkProps = {
  /** The number of the revision restored (a revision's rollback_of). */
  number: number;
  /** Ids already known by number (e.g. the history page shown), to spare a request. */
  known?: ReadonlyMap<number, number>;
};

/** "restores #N", linked to that revision's page (the API names it by number; pages go by id). */
export function RollbackOfLink({ number, known }: RollbackOfLinkProps) {
  const knownId = known?.get(number);
  const lookup = useRevisionByNumber(number, knownId === undefined);
  const id = knownId ?? lookup.data?.id;
  const text = `restores #${number}`;
  return id !== undefined ? <Link to={`/revisions/${id}`}>{text}</Link> : <span>{text}</span>;
}
