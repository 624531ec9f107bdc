import { useState } from 'react';
import { ActionsHeader, Alert, EmptyState, ErrorState, LoadingState, PageHeader, Panel, TableWrap } from '@/components';
import { usePermissions } from '@/features/auth';
import { useCertificates, useGenerateCertificate, useUploadCertificate } from '../hooks/useCertificates';
import { type GenerateFormValues, toGenerateRequest, toUploadRequest, type UploadFormValues } from '../types';
import { CertificateRow } from './CertificateRow';
import { GenerateCertificateForm } from './GenerateCertificateForm';
import { UploadCertificateForm } from './UploadCertificateForm';

function CertificatesTable({ canEdit }: { canEdit: boolean }) {
  const certificates = useCertificates();
  if (certificates.isPending) return <LoadingState />;
  if (certificates.isError) return <ErrorState error={certificates.error} onRetry={() => void certificates.refetch()} />;
  if (certificates.data.length === 0) {
    return (
      <EmptyState title="No certificates yet">
        <p>
          {canEdit
            ? 'Generate a self-signed certificate or upload one below, then choose it on an HTTPS virtual service.'
            : 'An admin generates or uploads them; they then appear here.'}
        </p>
      </EmptyState>
    );
  }
  return (
    <TableWrap label="Certificates">
      <table className="table">
        <caption className="visually-hidden">Certificates</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Subject CN</th>
            <th scope="col">Alternative names</th>
            <th scope="col">Expires</th>
            <th scope="col">Key</th>
            <th scope="col">Warnings</th>
            {canEdit ? (
              <ActionsHeader />
            ) : null}
          </tr>
        </thead>
        <tbody>
          {certificates.data.map((certificate) => (
            <CertificateRow key={certificate.id} certificate={certificate} canDelete={canEdit} />
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}

export function CertificatesPage() {
  const { canEdit } = usePermissions();
  const generate = useGenerateCertificate();
  const upload = useUploadCertificate();
  const [stored, setStored] = useState<string | null>(null);
  const onGenerate = async (values: GenerateFormValues) => {
    setStored(null);
    setStored((await generate.mutateAsync(toGenerateRequest(values))).name);
  };
  const onUpload = async (values: UploadFormValues) => {
    setStored(null);
    setStored((await upload.mutateAsync(toUploadRequest(values))).name);
  };
  return (
    <>
      <PageHeader
        title="Certificates"
        description="Certificates with their keys for HTTPS virtual services, and CA bundles that verify clients or re-encrypted members. Content is fixed once stored: a renewal is a new certificate."
      />
      <div className="stack">
        <Panel title="Stored certificates">
          {stored ? <Alert tone="success">Certificate {stored} stored.</Alert> : null}
          <CertificatesTable canEdit={canEdit} />
        </Panel>
        {canEdit ? (
          <>
            <Panel title="Generate a self-signed certificate">
              <GenerateCertificateForm onSubmit={onGenerate} />
            </Panel>
            <Panel title="Upload a certificate">
              <UploadCertificateForm onSubmit={onUpload} />
            </Panel>
          </>
        ) : null}
      </div>
    </>
  );
}
