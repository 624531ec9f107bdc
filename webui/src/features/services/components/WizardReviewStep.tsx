import { formatEndpoint } from '@/lib/format';
import {
  type CertificateChoice,
  forwardingLabel,
  type PoolChoice,
  SERVICE_KINDS,
  WIZARD_ALGORITHMS,
  WIZARD_CHECKS,
  type WizardValues,
} from '../types';

type ReviewProps = { values: WizardValues; pools: readonly PoolChoice[]; certificates: readonly CertificateChoice[] };

function describeCheck(values: WizardValues): string {
  if (values.check_type === 'http') return `HTTP GET ${values.check_path.trim()} expecting ${values.check_status}`;
  return WIZARD_CHECKS.find((check) => check.value === values.check_type)!.label;
}

function PoolSummary({ values, pools }: Pick<ReviewProps, 'values' | 'pools'>) {
  if (values.pool_mode === 'existing') {
    const pool = pools.find((p) => String(p.id) === values.existing_pool);
    return (
      <>
        <dt>Pool</dt>
        <dd>{pool?.name ?? values.existing_pool} (existing)</dd>
      </>
    );
  }
  return (
    <>
      <dt>New pool</dt>
      <dd>
        {values.pool_name.trim()}, {WIZARD_ALGORITHMS.find((a) => a.value === values.algorithm)!.label.toLowerCase()}
      </dd>
      <dt>Members</dt>
      <dd>
        <ul className="inline-list">
          {values.members.map((member, index) => (
            <li key={index}>
              {member.name.trim()} <span className="mono">{formatEndpoint(member.address.trim(), member.port)}</span>
            </li>
          ))}
        </ul>
      </dd>
      <dt>Health check</dt>
      <dd>{describeCheck(values)}</dd>
    </>
  );
}

function CertificateSummary({ values, certificates }: Pick<ReviewProps, 'values' | 'certificates'>) {
  if (values.kind !== 'web-https') return null;
  const stored = certificates.find((c) => String(c.id) === values.certificate);
  return (
    <>
      <dt>Certificate</dt>
      <dd>
        {values.certificate_mode === 'existing'
          ? `${stored?.name ?? values.certificate} (stored)`
          : `${values.cert_name.trim()}: self-signed for ${values.cert_common_name.trim()}, generated now`}
      </dd>
    </>
  );
}

/** What will be made, in the order it is made. */
function creationOrder(values: WizardValues): string {
  const parts = [
    values.kind === 'web-https' && values.certificate_mode === 'generate' ? `certificate ${values.cert_name.trim()}` : null,
    values.pool_mode === 'new' ? `pool ${values.pool_name.trim()}` : null,
    values.pool_mode === 'new' && values.check_type !== 'none' ? 'its health check' : null,
    values.pool_mode === 'new' ? `${values.members.length} member${values.members.length === 1 ? '' : 's'}` : null,
    `virtual service ${values.name.trim()}`,
  ];
  return parts.filter(Boolean).join(', then ');
}

/** The last step: a summary of everything the wizard will create. */
export function ReviewStep({ values, pools, certificates }: ReviewProps) {
  const layer4 = values.kind === 'layer4';
  return (
    <div className="form-section-body">
      <dl className="summary-list" aria-label="Summary">
        <dt>Kind</dt>
        <dd>{SERVICE_KINDS.find((k) => k.value === values.kind)!.label}</dd>
        <dt>Name</dt>
        <dd>{values.name.trim()}</dd>
        <dt>Listens on</dt>
        <dd>
          <span className="mono">{formatEndpoint(values.vip.trim(), values.port)}</span> {values.protocol.toUpperCase()}
          {layer4 ? `, ${forwardingLabel(values.forwarding)}` : null}
        </dd>
        <PoolSummary values={values} pools={pools} />
        <CertificateSummary values={values} certificates={certificates} />
      </dl>
      <p>Create makes the {creationOrder(values)}.</p>
      <p className="muted">Nothing changes on the nodes until you apply it on the Apply &amp; history page.</p>
    </div>
  );
}
