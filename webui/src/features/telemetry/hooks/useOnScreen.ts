import { type RefObject, useEffect, useState } from 'react';

/**
 * Whether the element is on screen (or near it): long lists draw and poll graphs only for
 * what can be seen. Without IntersectionObserver everything counts as visible.
 */
export function useOnScreen(ref: RefObject<Element | null>, margin = '200px'): boolean {
  const [visible, setVisible] = useState(typeof IntersectionObserver === 'undefined');
  useEffect(() => {
    const element = ref.current;
    if (!element || typeof IntersectionObserver === 'undefined') return;
    const observer = new IntersectionObserver((entries) => setVisible(entries.some((e) => e.isIntersecting)), { rootMargin: margin });
    observer.observe(element);
    return () => observer.disconnect();
  }, [ref, margin]);
  return visible;
}
