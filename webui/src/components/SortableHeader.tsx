import type { SortState } from '@/lib/listView';

type SortableHeaderProps<K extends string> = {
  column: K;
  label: string;
  sort: SortState<K>;
  onSort: (column: K) => void;
};

/**
 * A column header that sorts its table: a real button inside the `th`, and `aria-sort` on
 * the sorted column only (as the ARIA practices ask), so screen readers say the order.
 */
export function SortableHeader<K extends string>({ column, label, sort, onSort }: SortableHeaderProps<K>) {
  const active = sort.key === column;
  const next = active && sort.direction === 'ascending' ? 'descending' : 'ascending';
  return (
    <th scope="col" aria-sort={active ? sort.direction : undefined}>
      <button type="button" className="sort-button" onClick={() => onSort(column)} title={`Sort by ${label.toLowerCase()}, ${next}`}>
        {label}
        <span className="sort-indicator" aria-hidden="true">
          {active ? (sort.direction === 'ascending' ? '▲' : '▼') : '↕'}
        </span>
      </button>
    </th>
  );
}
