import { useMutation, useQueryClient } from '@tanstack/react-query';
import { queryKeys } from '@/lib/queryKeys';
import { createServiceFromWizard } from '../api/wizardApi';

/**
 * Creates the wizard's objects; whatever happened, the services, pools and certificates
 * shown elsewhere are refreshed (an attempt may have made and removed some).
 */
export function useCreateServiceFromWizard() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: createServiceFromWizard,
    onSettled: () =>
      Promise.all([
        queryClient.invalidateQueries({ queryKey: queryKeys.services }),
        queryClient.invalidateQueries({ queryKey: queryKeys.pools }),
        queryClient.invalidateQueries({ queryKey: queryKeys.certificates }),
      ]),
  });
}
