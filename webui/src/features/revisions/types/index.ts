import { z } from 'zod';
import type { Schemas } from '@/lib/api';

export type Revision = Schemas['Revision'];
export type NodeResult = Schemas['NodeRevision'];
export type NodeResultState = Schemas['NodeRevisionStateEnum'];
export type PublishProblem = Schemas['PublishProblem'];
export type PublishError = Schemas['PublishError'];

export const applyFormSchema = z.object({
  message: z.string().trim().max(500, 'At most 500 characters.'),
});
export type ApplyFormValues = z.infer<typeof applyFormSchema>;

/** True while any node has not yet reported on the revision. */
export function isSettling(revision: Pick<Revision, 'nodes'>): boolean {
  return revision.nodes.some((node) => node.state === 'pending');
}
