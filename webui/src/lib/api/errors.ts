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

/** Field messages from a DRF validation error: `{field: ["msg", ...]}` → `{field: "msg msg"}`. */
export function fieldErrors(error: unknown): Record<string, string> {
  if (!(error instanceof ApiError) || error.status !== 400 || !isRecord(error.body)) return {};
  const out: Record<string, string> = {};
  for (const [field, messages] of Object.entries(error.body)) {
    if (Array.isArray(messages)) out[field] = messages.map(String).join(' ');
    else if (typeof messages === 'string' && field !== 'detail') out[field] = messages;
  }
  return out;
}

/** A one-line message for an error that no single field owns. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return 'Something went wrong.';
}
