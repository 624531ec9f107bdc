import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { queryKeys } from '@/lib/queryKeys';
import { deleteCertificate, generateCertificate, listCertificates, uploadCertificate } from '../api/certificatesApi';

export function useCertificates() {
  return useQuery({ queryKey: queryKeys.certificates, queryFn: listCertificates });
}

/** Every change refreshes all certificate queries, the choices on service and pool forms too. */
function useInvalidateCertificates() {
  const queryClient = useQueryClient();
  return () => queryClient.invalidateQueries({ queryKey: queryKeys.certificates });
}

export function useUploadCertificate() {
  return useMutation({ mutationFn: uploadCertificate, onSuccess: useInvalidateCertificates() });
}

export function useGenerateCertificate() {
  return useMutation({ mutationFn: generateCertificate, onSuccess: useInvalidateCertificates() });
}

export function useDeleteCertificate() {
  return useMutation({ mutationFn: deleteCertificate, onSuccess: useInvalidateCertificates() });
}
