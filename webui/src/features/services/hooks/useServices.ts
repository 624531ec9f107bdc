import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type ServerListSpec, useServerList } from '@/lib/listView';
import { queryKeys } from '@/lib/queryKeys';
import {
  countServices,
  createService,
  deleteService,
  getService,
  listCertificateChoices,
  listPoolChoices,
  listServicePage,
  updateService,
} from '../api/servicesApi';
import type { VirtualServiceRequest } from '../types';

/** The services list: a page of them, searched and sorted by the API (`useServerList`). */
export function useServiceList<K extends string>(spec: ServerListSpec<K>) {
  return useServerList(spec, queryKeys.services, listServicePage, countServices);
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
