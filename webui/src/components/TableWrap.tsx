import type { ReactNode } from 'react';
import { useScrollRegion } from './useScrollRegion';

/** The box around a table. When the table is wider than the box (a phone), the box scrolls sideways. */
export function TableWrap({ label, children }: { label: string; children: ReactNode }) {
  const [box, region] = useScrollRegion<HTMLDivElement>(label);
  return (
    <div ref={box} className="table-wrap" {...region}>
      {children}
    </div>
  );
}
