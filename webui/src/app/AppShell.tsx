import { useEffect, useRef } from 'react';
import { NavLink, Outlet, useLocation } from 'react-router-dom';
import { Badge, PendingChangeNotice } from '@/components';
import { ReadOnlyBanner, SignOutButton, usePermissions } from '@/features/auth';
import { PendingBanner } from '@/features/revisions';
import { visibleNav } from './navigation';
import { ThemeSwitch } from './ThemeSwitch';
import { useDrawer } from './useDrawer';

const navClass = ({ isActive }: { isActive: boolean }) => (isActive ? 'nav-link active' : 'nav-link');

function Brand() {
  return (
    <div className="brand">
      <span className="brand-mark" aria-hidden="true" />
      Fulcrum
    </div>
  );
}

/** The grouped page links; links to pages the API would refuse for this role are left out. */
function MainNav() {
  const permissions = usePermissions();
  return (
    <nav aria-label="Main" className="nav">
      {visibleNav(permissions).map((group) => (
        <div key={group.label} className="nav-group" role="group" aria-labelledby={`nav-${group.label}`}>
          <p className="nav-group-label" id={`nav-${group.label}`}>
            {group.label}
          </p>
          <ul>
            {group.items.map((item) => (
              <li key={item.to}>
                <NavLink to={item.to} end={item.to === '/'} className={navClass}>
                  {item.label}
                </NavLink>
              </li>
            ))}
          </ul>
        </div>
      ))}
    </nav>
  );
}

/** Who is signed in, with which role, and the way to their account and out. */
function UserArea() {
  const { role } = usePermissions();
  return (
    <div className="user-area">
      <SignOutButton />
      <p className="user-meta">
        {role ? (
          <Badge tone="info">
            <span className="visually-hidden">Role: </span>
            {role}
          </Badge>
        ) : null}
        <NavLink to="/account" className="user-account-link">
          Your account
        </NavLink>
      </p>
    </div>
  );
}

/** Runs `onNavigate` when the path changes (not on the first render). */
function useOnNavigation(onNavigate: () => void) {
  const { pathname } = useLocation();
  const first = useRef(true);
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    onNavigate();
    // Only a new path should run it; onNavigate is a fresh closure each render.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [pathname]);
}

export function AppShell() {
  const sidebar = useRef<HTMLElement>(null);
  const main = useRef<HTMLElement>(null);
  const { open, button, toggle, close } = useDrawer(sidebar);
  // The new page's content takes focus; with the drawer open, once it has closed (the page
  // behind it is inert until then).
  useOnNavigation(() => (open ? close(main.current) : main.current?.focus()));
  return (
    <div className={open ? 'shell shell-drawer-open' : 'shell'}>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="mobile-bar" inert={open}>
        <button
          ref={button}
          type="button"
          className="menu-button"
          aria-expanded={open}
          aria-controls="sidebar"
          onClick={toggle}
        >
          <span className="menu-icon" aria-hidden="true" />
          Menu
        </button>
        <Brand />
      </header>
      <aside
        id="sidebar"
        ref={sidebar}
        className="sidebar"
        role={open ? 'dialog' : undefined}
        aria-modal={open || undefined}
        aria-label={open ? 'Menu' : undefined}
      >
        <div className="sidebar-head">
          <Brand />
          <button type="button" className="menu-close" onClick={() => close()}>
            Close menu
          </button>
        </div>
        <MainNav />
        <div className="sidebar-foot">
          <UserArea />
          <ThemeSwitch />
        </div>
      </aside>
      {open ? <div className="drawer-backdrop" aria-hidden="true" onClick={() => close()} /> : null}
      <div className="shell-main" inert={open}>
        <main id="main" ref={main} className="content" tabIndex={-1}>
          <ReadOnlyBanner />
          <PendingBanner />
          <PendingChangeNotice />
          <Outlet />
        </main>
      </div>
    </div>
  );
}
