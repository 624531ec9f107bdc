import { type ReactNode, useEffect } from 'react';

type PageHeaderProps = { title: string; description?: ReactNode; actions?: ReactNode; breadcrumb?: ReactNode };

/** The page's h1, which also names the browser tab ("Pool web · Fulcrum"). */
export function PageHeader({ title, description, actions, breadcrumb }: PageHeaderProps) {
  useEffect(() => {
    document.title = `${title} · Fulcrum`;
  }, [title]);
  return (
    <header className="page-header">
      <div>
        {breadcrumb ? <nav aria-label="Breadcrumb" className="breadcrumb">{breadcrumb}</nav> : null}
        <h1>{title}</h1>
        {description ? <p className="page-description">{description}</p> : null}
      </div>
      {actions ? <div className="page-actions">{actions}</div> : null}
    </header>
  );
}
