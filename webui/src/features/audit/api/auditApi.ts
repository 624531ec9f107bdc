import { api, unwrap } from '@/lib/api';
import { AUDIT_PAGE_SIZE } from '../types';

/** One page of the audit log, newest first; a bad filter answers 400 on its name. */
export function listAudit(query: Record<string, string>, offset: number) {
  return unwrap(api.GET('/api/v1/audit/', { params: { query: { ...query, limit: AUDIT_PAGE_SIZE, offset } } }));
}
