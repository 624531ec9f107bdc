import type { ReactNode } from 'react';

export type Fact = readonly [term: string, value: ReactNode];

/** Settings as read-only term/value pairs, for those who may look but not change. */
export function Facts({ items }: { items: readonly Fact[] }) {
  return (
    <dl className="facts">
      {items.map(([term, value]) => (
        <div key={term}>
          <dt>{term}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}
