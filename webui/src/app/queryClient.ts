import { QueryClient } from '@tanstack/react-query';
import { ApiError, setSignedOutHandler } from '@/lib/api';
import { queryKeys } from '@/lib/queryKeys';

export function createQueryClient(): QueryClient {
  const client = new QueryClient({
    defaultOptions: {
      queries: {
        staleTime: 5_000,
        // A refusal will not change on retry; only network trouble and 5xx are retried.
        retry: (failures, error) => failures < 2 && (!(error instanceof ApiError) || error.status === 0 || error.status >= 500),
      },
    },
  });
  // A 401 means the session ended (expired, or signed out elsewhere): show the sign-in page.
  setSignedOutHandler(() => client.setQueryData(queryKeys.me, null));
  return client;
}
