import { z } from 'zod';
import { PATTERNS } from '@/lib/api/catalog.gen';

// The API's input rules (api/compiler/rules.py): the patterns and their help come from the
// schema (lib/api/catalog.gen.ts), so mistakes show before a round trip. The server stays
// the authority: its messages land on the same fields.

export const NAME_PATTERN = PATTERNS.NAME.pattern;
export const NAME_HELP = PATTERNS.NAME.help;
export const HTTP_PATH_PATTERN = PATTERNS.HTTP_PATH.pattern;
export const HOST_PATTERN = PATTERNS.HOST.pattern;

export const objectName = z
  .string()
  .trim()
  .min(1, 'Enter a name.')
  .regex(NAME_PATTERN, NAME_HELP);

/** A whole number typed into an <input type="number"> read with valueAsNumber (empty → NaN). */
export function wholeNumber(label: string, min: number, max: number) {
  return z
    .number({ error: `Enter the ${label}.` })
    .int(`The ${label} must be a whole number.`)
    .min(min, `The ${label} must be between ${min} and ${max}.`)
    .max(max, `The ${label} must be between ${min} and ${max}.`);
}

export const port = wholeNumber('port', 1, 65535);
export const weight = wholeNumber('weight', 0, 256);

export const ipAddress = z
  .string()
  .trim()
  .min(1, 'Enter an IP address.')
  .refine((value) => z.ipv4().safeParse(value).success || z.ipv6().safeParse(value).success, {
    message: 'Enter a valid IPv4 or IPv6 address.',
  });

export const description = z.string().max(200, 'At most 200 characters.');

// --- layer 7 -----------------------------------------------------------------------------

/** Header, cookie and query-parameter names (compiler rules.FIELD_NAME_RE). */
export const FIELD_NAME_PATTERN = PATTERNS.FIELD_NAME.pattern;
export const FIELD_NAME_HELP = PATTERNS.FIELD_NAME.help;
/** A value matched against requests or written into a header: printable ASCII without '. */
export const TEXT_PATTERN = PATTERNS.TEXT.pattern;
export const TEXT_HELP = PATTERNS.TEXT.help;
export const MIME_TYPE_PATTERN = PATTERNS.MIME_TYPE.pattern;
export const REDIRECT_PATTERN = PATTERNS.REDIRECT.pattern;
export const REDIRECT_HELP = PATTERNS.REDIRECT.help;
export const SNI_PATTERN = PATTERNS.SNI.pattern;

/** The entries of a one-per-line textarea: trimmed, blank lines left out. */
export function splitLines(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
}

export function joinLines(values: readonly string[] | undefined): string {
  return (values ?? []).join('\n');
}

/** A one-per-line textarea whose every entry must pass `valid`; the first bad one is named. */
export function lineList(valid: (entry: string) => boolean, explain: (entry: string) => string) {
  return z.string().superRefine((text, ctx) => {
    const entries = splitLines(text);
    const bad = entries.findIndex((entry) => !valid(entry));
    if (bad >= 0) ctx.addIssue({ code: 'custom', message: `Entry ${bad + 1}: ${explain(entries[bad]!)}` });
  });
}

/** An address or a CIDR block, IPv4 or IPv6 (host bits may be set, as the API allows). */
export function isAddressOrCidr(value: string): boolean {
  return [z.ipv4(), z.ipv6(), z.cidrv4(), z.cidrv6()].some((schema) => schema.safeParse(value).success);
}

export const cidrLines = lineList(isAddressOrCidr, (entry) => `not an address or CIDR block: '${entry}'`);

/** A timeout in milliseconds, within the API's 100 ms - 24 h. */
export function timeoutMs(label: string) {
  return wholeNumber(label, 100, 86_400_000);
}

// --- layer 4 (IPVS through keepalived) ---------------------------------------------------

/** A network interface name (compiler rules.INTERFACE_RE). */
export const INTERFACE_PATTERN = PATTERNS.INTERFACE.pattern;
export const INTERFACE_HELP = PATTERNS.INTERFACE.help;
/** A name a DNS check asks for, or '.' (compiler rules.DNS_NAME_RE). */
export const DNS_NAME_PATTERN = PATTERNS.DNS_NAME.pattern;
/** The MD5 of a page, as keepalived's HTTP check compares it (compiler rules.DIGEST_RE). */
export const DIGEST_PATTERN = PATTERNS.DIGEST.pattern;
export const DIGEST_HELP = PATTERNS.DIGEST.help;
/** A vetted check program and plain arguments (compiler rules.CHECK_SCRIPT_RE). */
export const CHECK_SCRIPT_PATTERN = PATTERNS.CHECK_SCRIPT.pattern;
export const CHECK_SCRIPT_HELP = PATTERNS.CHECK_SCRIPT.help;

/** A multicast address: IPv4 224.0.0.0/4 or IPv6 ff00::/8. */
export function isMulticast(value: string): boolean {
  if (z.ipv4().safeParse(value).success) {
    const first = Number(value.split('.')[0]);
    return first >= 224 && first <= 239;
  }
  return z.ipv6().safeParse(value).success && /^ff/i.test(value);
}
