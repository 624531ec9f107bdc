import { z } from 'zod';
import type { Schemas } from '@/lib/api';
import { NAME_HELP, objectName } from '@/lib/validation';

export type Role = Schemas['RoleEnum'];
export type User = Schemas['User'];
export type UserRequest = Schemas['UserRequest'];
export type UserPatch = Schemas['PatchedUserRequest'];
export type ApiToken = Schemas['ApiToken'];
export type ApiTokenCreated = Schemas['ApiTokenCreated'];
export type ApiTokenRequest = Schemas['ApiTokenRequest'];
export type PasswordChangeRequest = Schemas['PasswordChangeRequest'];

export const ROLES: readonly { value: Role; label: string }[] = [
  { value: 'viewer', label: 'Viewer (read only)' },
  { value: 'operator', label: 'Operator (runtime changes, apply, roll back)' },
  { value: 'admin', label: 'Admin (everything)' },
];

const RANK: Record<Role, number> = { viewer: 0, operator: 1, admin: 2 };

/** The roles a person with `own` may give a token: at most their own (the API's rule). */
export function rolesUpTo(own: Role | undefined): typeof ROLES {
  return own ? ROLES.filter((role) => RANK[role.value] <= RANK[own]) : ROLES.slice(0, 1);
}

// --- passwords ---------------------------------------------------------------------------

// The API's AUTH_PASSWORD_VALIDATORS (api/fulcrum/settings.py): the length is checked here
// too; whether a password is too common only the API knows, and says next to the field.
export const PASSWORD_MIN_LENGTH = 10;
export const PASSWORD_RULES = `At least ${PASSWORD_MIN_LENGTH} characters, and not a commonly used password.`;

const newPassword = z
  .string()
  .min(PASSWORD_MIN_LENGTH, `At least ${PASSWORD_MIN_LENGTH} characters.`)
  .max(256, 'At most 256 characters.');

/** The new password and its repetition, which must match (the error goes on the repetition). */
function withRepeat<T extends z.ZodRawShape>(shape: T, password: string, repeat: string) {
  return z.object(shape).superRefine((values, ctx) => {
    const record = values as Record<string, unknown>;
    if (record[password] !== record[repeat]) {
      ctx.addIssue({ code: 'custom', path: [repeat], message: 'The two passwords differ.' });
    }
  });
}

// --- users -------------------------------------------------------------------------------

/** Django's user names: up to 150 letters, digits and @ . + - _ */
export const USERNAME_PATTERN = /^[\p{L}\p{N}_.@+-]{1,150}$/u;
export const USERNAME_HELP = "Up to 150 letters, digits and '@', '.', '+', '-' or '_'.";

export const newUserSchema = withRepeat(
  {
    username: z.string().trim().min(1, 'Enter a user name.').regex(USERNAME_PATTERN, USERNAME_HELP),
    password: newPassword,
    password_repeat: z.string(),
    role: z.enum(['viewer', 'operator', 'admin']),
  },
  'password',
  'password_repeat',
);
export type NewUserValues = { username: string; password: string; password_repeat: string; role: Role };
export const NEW_USER_FIELDS = ['username', 'password', 'password_repeat', 'role'] as const;
export const emptyNewUser = (): NewUserValues => ({ username: '', password: '', password_repeat: '', role: 'viewer' });

export function toUserRequest({ username, password, role }: NewUserValues): UserRequest {
  return { username, password, role, is_active: true };
}

export const passwordResetSchema = withRepeat({ password: newPassword, password_repeat: z.string() }, 'password', 'password_repeat');
export type PasswordResetValues = { password: string; password_repeat: string };
export const PASSWORD_RESET_FIELDS = ['password', 'password_repeat'] as const;

// --- your own password ---------------------------------------------------------------------

export const passwordChangeSchema = withRepeat(
  {
    old_password: z.string().min(1, 'Enter your current password.'),
    new_password: newPassword,
    new_password_repeat: z.string(),
    revoke_tokens: z.boolean(),
  },
  'new_password',
  'new_password_repeat',
);
export type PasswordChangeValues = { old_password: string; new_password: string; new_password_repeat: string; revoke_tokens: boolean };
export const PASSWORD_CHANGE_FIELDS = ['old_password', 'new_password', 'new_password_repeat', 'revoke_tokens'] as const;
export const emptyPasswordChange = (): PasswordChangeValues => ({ old_password: '', new_password: '', new_password_repeat: '', revoke_tokens: false });

export function toPasswordChangeRequest({ old_password, new_password, revoke_tokens }: PasswordChangeValues): PasswordChangeRequest {
  return { old_password, new_password, revoke_tokens };
}

// --- API tokens --------------------------------------------------------------------------

export const MAX_TOKEN_DAYS = 3650;

export const tokenSchema = z.object({
  name: objectName,
  role: z.enum(['viewer', 'operator', 'admin']),
  expires_in_days: z
    .string()
    .trim()
    .refine((text) => text === '' || (/^\d+$/.test(text) && Number(text) >= 1 && Number(text) <= MAX_TOKEN_DAYS), {
      message: `A whole number of days from 1 to ${MAX_TOKEN_DAYS}, or empty for a token that never expires.`,
    }),
});
export type TokenValues = { name: string; role: Role; expires_in_days: string };
export const TOKEN_FIELDS = ['name', 'role', 'expires_in_days'] as const;
export const TOKEN_NAME_HELP = NAME_HELP;
export const emptyToken = (role: Role = 'viewer'): TokenValues => ({ name: '', role, expires_in_days: '90' });

export function toTokenRequest({ name, role, expires_in_days }: TokenValues): ApiTokenRequest {
  return { name, role, ...(expires_in_days ? { expires_in_days: Number(expires_in_days) } : {}) };
}
