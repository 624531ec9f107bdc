import { QueryClientProvider } from '@tanstack/react-query';
import { useLayoutEffect, useState } from 'react';
import { RouterProvider } from 'react-router-dom';
import { syncDocumentTitle } from './pageTitle';
import { createQueryClient } from './queryClient';
import { createAppRouter } from './routes';

export function App() {
  const [queryClient] = useState(createQueryClient);
  const [router] = useState(createAppRouter);
  // A layout effect runs before the pages' effects, so a page's own title (PageHeader) wins.
  useLayoutEffect(() => syncDocumentTitle(router), [router]);
  return (
    <QueryClientProvider client={queryClient}>
      <RouterProvider router={router} />
    </QueryClientProvider>
  );
}
