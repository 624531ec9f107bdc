import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { queryKeys } from '@/lib/queryKeys';
import {
  createService,
  deleteService,
  getService,
  listCertificateChoices,
  listPoolChoices,
  listServices,
  updateService,
} from '../api/servicesApi';
import type { VirtualServiceRequest } from '../types';

export function useServices() {
  return useQuery({ queryKey: queryKeys.services, queryFn: listServices });
}

export function useService(id: number) {
  return useQuery({ queryKey: queryKeys.service(id), queryFn: () => getService(id) });
}

export function usePoolChoices() {
  return useQuery({ queryKey: [...queryKeys.pools, 'choices'], queryFn: listPoolChoices });
}

export function useCertificateChoices() {
  return useQuery({ queryKey: [...queryKeys.certificates, 'choices', 'services'], queryFn: listCertificateChoices });
}

/** Creates when `id` is undefined, else replaces the virtual service. */
export function useSaveService(id?: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: VirtualServiceRequest) => (id === undefined ? createService(body) : updateService(id, body)),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: queryKeys.services }),
  });
}

export function useDeleteService() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: deleteService,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: queryKeys.services }),
  });
}
