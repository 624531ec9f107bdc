import { type RefObject, useCallback, useEffect, useRef, useState } from 'react';

/** Wider than this, the sidebar is always shown and the drawer never opens (matches global.css). */
export const DRAWER_QUERY = '(min-width: 900px)';

const FOCUSABLE = 'a[href], button:not([disabled]), input:not([disabled]), select:not([disabled])';

/**
 * The narrow-screen menu: opening moves focus into the drawer; Escape or closing returns it
 * to the menu button (or where `close` is told, once the page behind is no longer inert), and
 * a window grown past the breakpoint closes it.
 */
export function useDrawer(drawer: RefObject<HTMLElement | null>) {
  const [open, setOpen] = useState(false);
  const button = useRef<HTMLButtonElement>(null);
  const focusAfterClose = useRef<HTMLElement | null>(null);

  /** Closes the drawer, then focuses `focusTo` (the menu button unless told; null: nothing). */
  const close = useCallback((focusTo?: HTMLElement | null) => {
    focusAfterClose.current = focusTo === undefined ? button.current : focusTo;
    setOpen(false);
  }, []);

  useEffect(() => {
    if (open) drawer.current?.querySelector<HTMLElement>(FOCUSABLE)?.focus();
    else focusAfterClose.current?.focus();
    focusAfterClose.current = null;
  }, [open, drawer]);

  useEffect(() => {
    if (!open) return;
    const onKey = (event: KeyboardEvent) => {
      if (event.key === 'Escape') close();
    };
    document.addEventListener('keydown', onKey);
    const wide = window.matchMedia?.(DRAWER_QUERY);
    const onWide = (event: MediaQueryListEvent) => {
      if (event.matches) close(null);
    };
    wide?.addEventListener('change', onWide);
    return () => {
      document.removeEventListener('keydown', onKey);
      wide?.removeEventListener('change', onWide);
    };
  }, [open, close]);

  return { open, button, toggle: () => (open ? close() : setOpen(true)), close };
}
