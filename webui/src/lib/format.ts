const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

/** A timestamp from the API for people; `fallback` when there is none. */
export function formatDateTime(value: string | null | undefined, fallback = 'never'): string {
  if (!value) return fallback;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? value : dateTime.format(date);
}

/** `10.0.0.1:80`, `[2001:db8::1]:80` for IPv6, `10.0.0.1:8000-8099` for a port range. */
export function formatEndpoint(address: string, port: number, portEnd = 0): string {
  const ports = portEnd ? `${port}-${portEnd}` : String(port);
  return address.includes(':') ? `[${address}]:${ports}` : `${address}:${ports}`;
}
