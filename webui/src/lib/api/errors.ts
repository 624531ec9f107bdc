/** A refusal from the API, with the decoded body (DRF: `{field: [messages]}` or `{detail}`). */
export class ApiError extends Error {
  readonly status: number;
  readonly body: unknown;

  constructor(status: number, body: unknown) {
    super(describeBody(status, body));
    this.name = 'ApiError';
    this.status = status;
    this.body = body;
  }
}

function describeBody(status: number, body: unknown): string {
  if (isRecord(body) && typeof body.detail === 'string') return body.detail;
  if (status === 0) return 'The API could not be reached.';
  if (status === 400) return 'The API refused the request; see the messages below.';
  return `The API answered ${status}.`;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

type FetchResult<T> = { data?: T; error?: unknown; response: Response };

/** The data of a successful openapi-fetch call, or an ApiError for anything else. */
export async function unwrap<T>(call: Promise<FetchResult<T>>): Promise<T> {
  let result: FetchResult<T>;
  try {
    result = await call;
  } catch (err) {
    throw new ApiError(0, { detail: `The API could not be reached (${String(err)}).` });
  }
  if (!result.response.ok) throw new ApiError(result.response.status, result.error);
  return result.data as T;
}

/** One message of a refusal, with the path of the field it concerns (`['persistence', 'cookie_name']`). */
export type ServerFieldError = { path: string[]; message: string };

// The compiler's messages name the part of a field they concern before a colon:
// "0/values/0: regular expression does not compile", "cookie_name: invalid name 'a b'".
const SUB_PATH = /^([A-Za-z0-9_]+(?:\/[A-Za-z0-9_]+)*): ([\s\S]+)$/;

function collect(value: unknown, path: string[], out: ServerFieldError[]): void {
  if (typeof value === 'string') {
    const sub = path[0] === 'non_field_errors' ? null : SUB_PATH.exec(value);
    out.push(sub ? { path: [...path, ...sub[1]!.split('/')], message: sub[2]! } : { path, message: value });
  } else if (Array.isArray(value)) {
    // DRF lists a nested list's errors item by item ({} for a valid item): the index is part of the path.
    value.forEach((item, index) => collect(item, typeof item === 'string' ? path : [...path, String(index)], out));
  } else if (isRecord(value)) {
    for (const [key, nested] of Object.entries(value)) collect(nested, [...path, key], out);
  }
}

/**
 * Every field message of a DRF validation error, with its full path: nested serializers
 * (`{persistence: {cookie_name: [..]}}`), list items (`{conditions: [{}, {kind: [..]}]}`,
 * `{allow_cidrs: {"1": [..]}}`) and the compiler's sub-path prefixes all become path segments.
 */
export function serverFieldErrors(error: unknown): ServerFieldError[] {
  if (!(error instanceof ApiError) || error.status !== 400 || !isRecord(error.body)) return [];
  const out: ServerFieldError[] = [];
  for (const [field, messages] of Object.entries(error.body)) {
    if (field !== 'detail') collect(messages, [field], out);
  }
  return out;
}

/** How the part of a field a message concerns is said to people: "Entry 2", "values/Entry 1". */
export function describeSubPath(segments: readonly string[]): string {
  return segments.map((segment) => (/^\d+$/.test(segment) ? `Entry ${Number(segment) + 1}` : segment)).join(' / ');
}

/** Field messages from a DRF validation error: `{field: ["msg", ...]}` → `{field: "msg msg"}`. */
export function fieldErrors(error: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const { path, message } of serverFieldErrors(error)) {
    const [field, ...rest] = path as [string, ...string[]];
    const text = rest.length ? `${describeSubPath(rest)}: ${message}` : message;
    out[field] = out[field] ? `${out[field]} ${text}` : text;
  }
  return out;
}

/** The reasons of a refusal that lists them (`{detail, problems: [{path, message}]}`). */
export function refusalProblems(error: unknown): { path: string; message: string }[] {
  if (!(error instanceof ApiError) || !isRecord(error.body) || !Array.isArray(error.body.problems)) return [];
  return error.body.problems.filter(isRecord).map((p) => ({ path: String(p.path ?? ''), message: String(p.message ?? '') }));
}

/** A one-line message for an error that no single field owns (with a refusal's reasons). */
export function errorMessage(error: unknown): string {
  if (!(error instanceof Error)) return 'Something went wrong.';
  const reasons = refusalProblems(error).map((p) => p.message);
  return reasons.length ? `${error.message.replace(/\.$/, '')}: ${reasons.join('; ')}.` : error.message;
}
