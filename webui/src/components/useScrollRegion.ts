import { useEffect, useRef, useState } from 'react';

/**
 * For a box that may scroll (a wide table on a phone, a long message under its max-height):
 * while its content overflows, the props that make it a labelled, focusable region, so the
 * keyboard can scroll it too (WCAG 2.1.1); otherwise none, and it stays out of the tab order.
 */
export function useScrollRegion<E extends HTMLElement>(label: string) {
  const box = useRef<E>(null);
  const [scrolls, setScrolls] = useState(false);
  useEffect(() => {
    const element = box.current;
    if (!element || typeof ResizeObserver === 'undefined') return;
    const measure = () =>
      setScrolls(element.scrollWidth > element.clientWidth || element.scrollHeight > element.clientHeight);
    const observer = new ResizeObserver(measure);
    observer.observe(element);
    if (element.firstElementChild) observer.observe(element.firstElementChild);
    measure();
    return () => observer.disconnect();
  }, []);
  const region = scrolls ? { tabIndex: 0, role: 'region', 'aria-label': `${label}, scrolls` } : {};
  return [box, region] as const;
}
