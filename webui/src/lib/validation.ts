import { z } from 'zod';

// The API's input rules (api/compiler/rules.py), repeated here so mistakes show before a
// round trip. The server stays the authority: its messages land on the same fields.

export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/;
export const NAME_HELP = "1-63 letters, digits, '_', '.' or '-', starting with a letter or digit.";
export const HTTP_PATH_PATTERN = /^\/[A-Za-z0-9._~!&()*+,;=:@%/?-]{0,1023}$/;
export const HOST_PATTERN =
  /^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

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
