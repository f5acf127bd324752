// The sign-in pages' calls to the server's /api/auth endpoints (server/auth/accounts): plain
// JSON over fetch, same origin, with the server's message when it refuses.
export class AuthError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

export async function authCall<T = unknown>(path: string, body?: unknown): Promise<T> {
  const res = await fetch(`/api/auth${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: "same-origin",
  });
  const text = await res.text();
  let data: unknown = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!res.ok) {
    const message = (data as { message?: string } | null)?.message ?? `The server answered ${res.status}.`;
    throw new AuthError(message, res.status);
  }
  return data as T;
}

export interface AuthMode {
  accounts: boolean;
  firstOwner: boolean;
  signUp: "invite" | "open";
  mail: boolean;
}

/** A `next` that stays on this server (a path, never //host or a scheme), else the home page. */
export function safeNext(next: string | null): string {
  return next && /^\/(?![/\\])/.test(next) ? next : "/";
}
