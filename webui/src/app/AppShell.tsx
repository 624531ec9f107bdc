import { NavLink, Outlet } from 'react-router-dom';
import { SignOutButton } from '@/features/auth';

const NAV = [
  { to: '/services', label: 'Virtual services' },
  { to: '/pools', label: 'Pools' },
  { to: '/certificates', label: 'Certificates' },
  { to: '/revisions', label: 'Apply & history' },
  { to: '/nodes', label: 'Nodes' },
  { to: '/ha', label: 'High availability' },
];

export function AppShell() {
  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <div className="brand">
          <span className="brand-mark" aria-hidden="true" />
          Fulcrum
        </div>
        <nav aria-label="Main" className="nav">
          {NAV.map((item) => (
            <NavLink key={item.to} to={item.to} className={({ isActive }) => (isActive ? 'nav-link active' : 'nav-link')}>
              {item.label}
            </NavLink>
          ))}
        </nav>
        <SignOutButton />
      </header>
      <main id="main" className="content" tabIndex={-1}>
        <Outlet />
      </main>
    </div>
  );
}
