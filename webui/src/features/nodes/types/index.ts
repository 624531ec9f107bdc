import { z } from 'zod';
import type { Schemas } from '@/lib/api';
import { objectName } from '@/lib/validation';

export type Node = Schemas['Node'];
export type NodeCreated = Schemas['NodeCreate'];

export const nodeFormSchema = z.object({ name: objectName });
export type NodeFormValues = z.infer<typeof nodeFormSchema>;
export const NODE_FORM_FIELDS = ['name'] as const;
