import { type ReactNode, useEffect, useRef, useState } from 'react';

/**
 * The box around a table. When the table is wider than the box (a phone), the box scrolls
 * sideways and becomes a labelled, focusable region, so the keyboard can scroll it too (WCAG
 * 2.1.1); otherwise it stays out of the tab order.
 */
export function TableWrap({ label, children }: { label: string; children: ReactNode }) {
  const box = useRef<HTMLDivElement>(null);
  const [scrolls, setScrolls] = useState(false);
  useEffect(() => {
    const element = box.current;
    if (!element || typeof ResizeObserver === 'undefined') return;
    const measure = () => setScrolls(element.scrollWidth > element.clientWidth);
    const observer = new ResizeObserver(measure);
    observer.observe(element);
    if (element.firstElementChild) observer.observe(element.firstElementChild);
    measure();
    return () => observer.disconnect();
  }, []);
  const region = scrolls ? { tabIndex: 0, role: 'region', 'aria-label': `${label}, scrolls sideways` } : {};
  return (
    <div ref={box} className="table-wrap" {...region}>
      {children}
    </div>
  );
}
