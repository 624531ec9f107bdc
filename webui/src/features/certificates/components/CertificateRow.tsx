import { Alert, Badge, ConfirmButton } from '@/components';
import { errorMessage } from '@/lib/api';
import { formatDateTime } from '@/lib/format';
import { useDeleteCertificate } from '../hooks/useCertificates';
import { type Certificate, commonName, EXPIRY_WARNING_DAYS, keyTypeLabel } from '../types';

function Expiry({ certificate }: { certificate: Certificate }) {
  const days = certificate.expires_in_days;
  const when = formatDateTime(certificate.not_after);
  if (days < 0) return <Badge tone="danger">expired {-days} days ago</Badge>;
  const text = days === 1 ? 'in 1 day' : `in ${days} days`;
  return (
    <span title={when}>
      {days < EXPIRY_WARNING_DAYS ? <Badge tone="warning">{text}</Badge> : text}
    </span>
  );
}

/** One certificate; `canDelete` (admins) adds the delete action in its own cell. */
export function CertificateRow({ certificate, canDelete }: { certificate: Certificate; canDelete: boolean }) {
  return (
    <tr>
      <th scope="row">
        {certificate.name}
        {certificate.description ? <div className="cell-note">{certificate.description}</div> : null}
      </th>
      <td className="mono">{commonName(certificate.subject) || <span className="muted">{certificate.subject || 'none'}</span>}</td>
      <td className="mono">{certificate.sans.length ? certificate.sans.join(', ') : <span className="muted">none</span>}</td>
      <td className="nowrap">
        <Expiry certificate={certificate} />
      </td>
      <td>{keyTypeLabel(certificate)}</td>
      <td>
        {certificate.warnings.length ? (
          <ul className="cell-list">
            {certificate.warnings.map((warning) => (
              <li key={warning}>{warning}</li>
            ))}
          </ul>
        ) : (
          <span className="muted">none</span>
        )}
      </td>
      {canDelete ? <DeleteCell certificate={certificate} /> : null}
    </tr>
  );
}

function DeleteCell({ certificate }: { certificate: Certificate }) {
  const remove = useDeleteCertificate();
  return (
    <td className="cell-actions">
      <ConfirmButton size="small" subject={`certificate ${certificate.name}`} busy={remove.isPending} onConfirm={() => remove.mutate(certificate.id)}>
        Delete
      </ConfirmButton>
      {remove.isError ? (
        <Alert tone="error" title="Not deleted">
          {errorMessage(remove.error)}
        </Alert>
      ) : null}
    </td>
  );
}
