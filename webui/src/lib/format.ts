const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

/** A timestamp from the API for people; `fallback` when there is none. */
export function formatDateTime(value: string | null | undefined, fallback = 'never'): string {
  if (!value) return fallback;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? value : dateTime.format(date);
}

/** `10.0.0.1:80`, or `[2001:db8::1]:80` for IPv6. */
export function formatEndpoint(address: string, port: number): string {
  return address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;
}
