import type { ReactNode } from 'react';

type PanelProps = { title: string; actions?: ReactNode; children: ReactNode; headingLevel?: 2 | 3 };

/** A titled section of a page; the heading names the region for assistive tech. */
export function Panel({ title, actions, children, headingLevel = 2 }: PanelProps) {
  const Heading = headingLevel === 2 ? 'h2' : 'h3';
  const id = `panel-${title.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
  return (
    <section className="panel" aria-labelledby={id}>
      <div className="panel-header">
        <Heading id={id}>{title}</Heading>
        {actions ? <div className="panel-actions">{actions}</div> : null}
      </div>
      <div className="panel-body">{children}</div>
    </section>
  );
}
