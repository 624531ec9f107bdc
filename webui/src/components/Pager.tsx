import { formatCount } from '@/lib/listView';
import { Button } from './Button';

type PagerProps = {
  /** The first row shown, from 0, and the rows there are in all. */
  offset: number;
  count: number;
  pageSize: number;
  onOffset: (offset: number) => void;
  /** The navigation's name for screen readers, e.g. "Virtual service pages". */
  label: string;
  /** The buttons' words; a log says Newer and Older. */
  previous?: string;
  next?: string;
};

/** Previous and next page of a list paged on the server, and where this page stands. */
export function Pager({ offset, count, pageSize, onOffset, label, previous = 'Previous', next = 'Next' }: PagerProps) {
  const page = Math.floor(offset / pageSize);
  const pages = Math.max(1, Math.ceil(count / pageSize));
  if (pages <= 1) return null;
  return (
    <nav className="pager" aria-label={label}>
      <Button size="small" disabled={page === 0} onClick={() => onOffset(Math.max(0, offset - pageSize))}>
        {previous}
      </Button>
      <span className="muted">
        Page {formatCount(page + 1)} of {formatCount(pages)}
      </span>
      <Button size="small" disabled={page + 1 >= pages} onClick={() => onOffset(offset + pageSize)}>
        {next}
      </Button>
    </nav>
  );
}
