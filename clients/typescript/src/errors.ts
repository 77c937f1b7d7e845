/**
 * The errors a call raises, by HTTP status, named as graphmem's Python errors are
 * (`graphmem.errors`). Every 4xx/5xx body is `{"error": {"code", "message"}}`.
 */

/** Any error graphmem answered (or an unreachable server: status 0). */
export class GraphMemError extends Error {
  /** The HTTP status (0 when the server could not be reached). */
  readonly status: number;
  /** graphmem's error code, e.g. `not_found`, `invalid_content`, `forbidden`. */
  readonly code: string;

  constructor(message: string, status: number, code: string) {
    super(message);
    this.name = new.target.name;
    this.status = status;
    this.code = code;
  }
}

/** 400 / 413 / 422: the request was refused as it stands; nothing was written. */
export class ValidationError extends GraphMemError {}
/** 401: no key, or a key the server does not know. */
export class AuthError extends GraphMemError {}
/** 403: the key may not do this (its role, or a namespace outside its scope). */
export class ForbiddenError extends AuthError {}
/** 404: no such memory, run or route in this namespace. */
export class NotFoundError extends GraphMemError {}
/** 409: the write conflicts with what is stored (a duplicate id, a state that forbids it). */
export class ConflictError extends GraphMemError {}
/** 429: too many requests for now. */
export class RateLimitError extends GraphMemError {}
/** 5xx, or no answer at all (status 0). */
export class UnavailableError extends GraphMemError {}

const BY_STATUS: Record<number, typeof GraphMemError> = {
  400: ValidationError, 401: AuthError, 403: ForbiddenError, 404: NotFoundError,
  409: ConflictError, 413: ValidationError, 422: ValidationError, 429: RateLimitError,
};

/** The typed error for a failed response (its body read once). */
export async function errorFrom(response: Response): Promise<GraphMemError> {
  const text = await response.text();
  let code = "http_error";
  let message = text || response.statusText;
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
    if (typeof body.error?.code === "string") code = body.error.code;
    if (typeof body.error?.message === "string") message = body.error.message;
  } catch {
    // not JSON (a proxy's page): the text is the message
  }
  const cls = BY_STATUS[response.status] ?? (response.status >= 500 ? UnavailableError : GraphMemError);
  return new cls(message, response.status, code);
}

/** A fetch that threw (refused, reset, DNS): the server could not be reached. */
export function unreachable(baseUrl: string, cause: unknown): UnavailableError {
  const why = cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause);
  return new UnavailableError(`graphmem at ${baseUrl} could not be reached: ${why}`, 0, "unavailable");
}
