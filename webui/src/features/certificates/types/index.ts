import { z } from 'zod';
import type { Schemas } from '@/lib/api';
import { description, objectName, splitLines, wholeNumber } from '@/lib/validation';

export type Certificate = Schemas['Certificate'];
export type CertificateRequest = Schemas['CertificateRequest'];
export type CertificateGenerateRequest = Schemas['CertificateGenerateRequest'];
export type KeyType = Schemas['KeyTypeEnum'];

export const KEY_TYPES: readonly { value: KeyType; label: string }[] = [
  { value: 'rsa-2048', label: 'RSA 2048 bits' },
  { value: 'rsa-4096', label: 'RSA 4096 bits' },
  { value: 'ecdsa-p256', label: 'ECDSA P-256' },
  { value: 'ecdsa-p384', label: 'ECDSA P-384' },
];

/** Fewer days than this left before expiry is worth a warning. */
export const EXPIRY_WARNING_DAYS = 30;

// --- upload ---

const pem = (what: string, marker: RegExp) =>
  z.string().trim().refine((text) => text === '' || marker.test(text), { message: `Paste ${what} in PEM form (-----BEGIN …-----).` });

export const uploadFormSchema = z.object({
  name: objectName,
  description,
  certificate: pem('the certificate', /-----BEGIN CERTIFICATE-----/).refine(Boolean, { message: 'Paste the certificate (PEM).' }),
  chain: pem('the chain', /-----BEGIN CERTIFICATE-----/),
  private_key: pem('the private key', /-----BEGIN [A-Z ]*PRIVATE KEY-----/),
  passphrase: z.string(),
});
export type UploadFormValues = z.infer<typeof uploadFormSchema>;
export const UPLOAD_FORM_FIELDS = ['name', 'description', 'certificate', 'chain', 'private_key', 'passphrase'] as const;

export function emptyUploadForm(): UploadFormValues {
  return { name: '', description: '', certificate: '', chain: '', private_key: '', passphrase: '' };
}

/** Empty optional parts are left out: the API treats a missing key as a CA bundle. */
export function toUploadRequest(values: UploadFormValues): CertificateRequest {
  const { chain, private_key, passphrase, ...rest } = values;
  return { ...rest, ...(chain ? { chain } : {}), ...(private_key ? { private_key } : {}), ...(passphrase ? { passphrase } : {}) };
}

// --- generate ---

export const generateFormSchema = z.object({
  name: objectName,
  description,
  common_name: z.string().trim().min(1, 'Enter the common name, e.g. www.example.com.').max(64, 'At most 64 characters.'),
  sans: z.string(),
  key_type: z.enum(['rsa-2048', 'rsa-4096', 'ecdsa-p256', 'ecdsa-p384']),
  days: wholeNumber('validity', 1, 3650),
});
export type GenerateFormValues = z.infer<typeof generateFormSchema>;
export const GENERATE_FORM_FIELDS = ['name', 'description', 'common_name', 'sans', 'key_type', 'days'] as const;

export function emptyGenerateForm(): GenerateFormValues {
  return { name: '', description: '', common_name: '', sans: '', key_type: 'ecdsa-p256', days: 365 };
}

export function toGenerateRequest(values: GenerateFormValues): CertificateGenerateRequest {
  const sans = splitLines(values.sans);
  return { ...values, sans: sans.length ? sans : undefined };
}

// --- display ---

/** The CN of an RFC 4514 distinguished name ("CN=www.example.com,O=Example" → "www.example.com"). */
export function commonName(subject: string): string {
  const match = /(?:^|,)CN=((?:\\.|[^,])*)/.exec(subject);
  return match ? match[1]!.replace(/\\(.)/g, '$1') : '';
}

export function keyTypeLabel(certificate: Pick<Certificate, 'has_key' | 'key_type' | 'is_ca'>): string {
  if (!certificate.has_key) return certificate.is_ca ? 'none (CA bundle)' : 'none';
  return KEY_TYPES.find((k) => k.value === certificate.key_type)?.label ?? certificate.key_type;
}
