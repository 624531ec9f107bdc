import { api, errorMessage, unwrap } from '@/lib/api';
import {
  toWizardCertificateRequest,
  toWizardCheckRequest,
  toWizardMemberRequests,
  toWizardPoolRequest,
  toWizardServiceRequest,
  type VirtualService,
  type WizardStage,
  type WizardValues,
} from '../types';

/** A refused wizard call, with what this attempt had made and took away again. */
export class WizardCreateError extends Error {
  constructor(
    readonly stage: WizardStage,
    readonly refusal: unknown,
    /** What this attempt made and then deleted, e.g. "pool web (with its health check and members)". */
    readonly removed: readonly string[],
    /** What could not be deleted, with the reason: left for the operator to remove. */
    readonly leftBehind: readonly string[],
  ) {
    super(errorMessage(refusal));
  }
}

type Made = { pool?: { id: number; name: string }; certificate?: { id: number; name: string } };

async function undo(made: Made): Promise<{ removed: string[]; leftBehind: string[] }> {
  const removed: string[] = [];
  const leftBehind: string[] = [];
  // The pool first: its members and check go with it, and the certificate is unused once no service was made.
  if (made.pool) {
    const what = `pool ${made.pool.name} (with its health check and members)`;
    try {
      await unwrap(api.DELETE('/api/v1/pools/{id}/', { params: { path: { id: made.pool.id } } }));
      removed.push(what);
    } catch (err) {
      leftBehind.push(`${what}: ${errorMessage(err)}`);
    }
  }
  if (made.certificate) {
    const what = `certificate ${made.certificate.name}`;
    try {
      await unwrap(api.DELETE('/api/v1/certificates/{id}/', { params: { path: { id: made.certificate.id } } }));
      removed.push(what);
    } catch (err) {
      leftBehind.push(`${what}: ${errorMessage(err)}`);
    }
  }
  return { removed, leftBehind };
}

/**
 * Asks the API whether the service's name and listener are free and usable, before the
 * pool exists (the listener step's Next): resolves, or throws the refusal with its field
 * errors (name, vip, port, protocol), as creating the service would.
 */
export async function checkListener(values: WizardValues): Promise<void> {
  const { name, vip, port, protocol } = toWizardServiceRequest(values, 0, null);
  await unwrap(api.POST('/api/v1/virtual-services/check-listener/', { body: { name, vip, port, protocol } }));
}

/**
 * Creates what the wizard describes, in dependency order: the certificate it generates, the
 * new pool, its health check, its members, then the virtual service. When a call is refused,
 * what this attempt made is deleted again so nothing half-made is left, and the refusal is
 * thrown as a WizardCreateError naming the call.
 */
export async function createServiceFromWizard(values: WizardValues): Promise<VirtualService> {
  const made: Made = {};
  let stage: WizardStage = { call: 'certificate' };
  try {
    let certificate = values.certificate ? Number(values.certificate) : null;
    if (values.kind === 'web-https' && values.certificate_mode === 'generate') {
      const generated = await unwrap(api.POST('/api/v1/certificates/generate/', { body: toWizardCertificateRequest(values) }));
      made.certificate = { id: generated.id, name: generated.name };
      certificate = generated.id;
    }
    let pool = Number(values.existing_pool);
    if (values.pool_mode === 'new') {
      stage = { call: 'pool' };
      const created = await unwrap(api.POST('/api/v1/pools/', { body: toWizardPoolRequest(values) }));
      made.pool = { id: created.id, name: created.name };
      pool = created.id;
      stage = { call: 'check' };
      const check = toWizardCheckRequest(pool, values);
      if (check) await unwrap(api.POST('/api/v1/health-checks/', { body: check }));
      for (const [index, member] of toWizardMemberRequests(pool, values).entries()) {
        stage = { call: 'member', index };
        await unwrap(api.POST('/api/v1/members/', { body: member }));
      }
    }
    stage = { call: 'service' };
    return await unwrap(api.POST('/api/v1/virtual-services/', { body: toWizardServiceRequest(values, pool, certificate) }));
  } catch (err) {
    const { removed, leftBehind } = await undo(made);
    throw new WizardCreateError(stage, err, removed, leftBehind);
  }
}
