import { z } from 'zod';
import type { Schemas } from '@/lib/api';

export type User = Schemas['Me'];
export type LoginRequest = Schemas['LoginRequest'];
export type Membership = Schemas['Membership'];

export const signInSchema = z.object({
  username: z.string().trim().min(1, 'Enter your user name.').max(150),
  password: z.string().min(1, 'Enter your password.').max(256),
});
export type SignInValues = z.infer<typeof signInSchema>;
