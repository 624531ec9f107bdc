import { api, listAll, unwrap } from '@/lib/api';
import type { Certificate, CertificateGenerateRequest, CertificateRequest } from '../types';

export function listCertificates(): Promise<Certificate[]> {
  return listAll((limit, offset) => unwrap(api.GET('/api/v1/certificates/', { params: { query: { limit, offset } } })));
}

/** Stores an uploaded certificate; its key (decrypted with the passphrase) is never shown again. */
export function uploadCertificate(body: CertificateRequest): Promise<Certificate> {
  return unwrap(api.POST('/api/v1/certificates/', { body }));
}

/** A new key and a self-signed certificate for it, made on the appliance. */
export function generateCertificate(body: CertificateGenerateRequest): Promise<Certificate> {
  return unwrap(api.POST('/api/v1/certificates/generate/', { body }));
}

/** Refused (409, `{detail}`) while a virtual service or pool uses the certificate. */
export async function deleteCertificate(id: number): Promise<void> {
  await unwrap(api.DELETE('/api/v1/certificates/{id}/', { params: { path: { id } } }));
}
