import { Link, type LinkProps } from 'react-router-dom';

type ButtonLinkProps = LinkProps & { variant?: 'primary' | 'secondary' | 'ghost'; size?: 'normal' | 'small' };

/** A link that looks like a button: it navigates, so it stays a link for assistive tech. */
export function ButtonLink({ variant = 'secondary', size = 'normal', className, ...rest }: ButtonLinkProps) {
  const classes = ['button', `button-${variant}`, size === 'small' ? 'button-small' : null, className];
  return <Link className={classes.filter(Boolean).join(' ')} {...rest} />;
}
