import type { components } from './schema';

export { api, readCookie, setSignedOutHandler } from './client';
export { listAll } from './paginate';
export { type CatalogChoice, CHOICES, type Layer, PATTERNS, VALUES } from './catalog.gen';
export {
  ApiError,
  describeSubPath,
  errorMessage,
  fieldErrors,
  isRecord,
  refusalProblems,
  type ServerFieldError,
  serverFieldErrors,
  unwrap,
} from './errors';
export type { components, paths } from './schema';

/** The API's DTOs, by their OpenAPI names (`Schemas['Pool']`, `Schemas['MemberRequest']`). */
export type Schemas = components['schemas'];
