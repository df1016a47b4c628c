// The API as the pages call it: the same /api/v1/ endpoints as every client, authenticated by the browser's
// session (same origin only) and, on writes, by the CSRF token Django checks in `X-CSRFToken`.
"use strict";

window.trackerApi = (() => {
  class ApiError extends Error {
    constructor(status, body) {
      super(body?.error ?? `the service answered ${status}`);
      this.status = status;
      this.body = body ?? {};
    }
  }

  function csrfToken() {
    const cookie = document.cookie.split("; ").find((pair) => pair.startsWith("csrftoken="));
    if (cookie) return decodeURIComponent(cookie.slice("csrftoken=".length));
    return document.querySelector("input[name=csrfmiddlewaretoken]")?.value ?? "";
  }

  // `body`: a plain object (sent as JSON), a FormData (multipart, for uploads) or undefined (no body).
  // `keepalive`: the request outlives the page (one sent as a link leads elsewhere). `headers`: more of them
  // (If-Match). `withEtag`: answer {data, etag} rather than the data alone.
  async function request(method, url, body, { keepalive = false, headers: extra = {}, withEtag = false } = {}) {
    const headers = { Accept: "application/json", ...extra };
    let payload;
    if (body instanceof FormData) payload = body;
    else if (body !== undefined) {
      headers["Content-Type"] = "application/json";
      payload = JSON.stringify(body);
    }
    if (method !== "GET") headers["X-CSRFToken"] = csrfToken();
    let response;
    try {
      response = await fetch(url, { method, headers, body: payload, credentials: "same-origin", keepalive });
    } catch {
      throw new ApiError(0, { error: "the service cannot be reached" });
    }
    const data = await response.json().catch(() => null);
    if (!response.ok) throw new ApiError(response.status, data);
    return withEtag ? { data, etag: response.headers.get("ETag") } : data;
  }

  // What a person reads when a request is refused: the service's own message (it names the reason and the
  // field), else the meaning of its status.
  const REASONS = {
    0: "You seem to be offline",
    401: "You are logged out: reload the page to log in again",
    403: "Your role in this project does not allow this",
    404: "It no longer exists, or you no longer have access",
    409: "Another request is still being served: try again",
    412: "It changed meanwhile: try again",
    413: "That is too large",
    429: "Too many requests: wait a moment",
  };

  function explain(error) {
    if (!(error instanceof ApiError)) return String(error);
    const detail = error.status === 401 || error.status === 0 ? null : error.body.error;
    const text = detail ?? REASONS[error.status] ?? `The service answered ${error.status}`;
    return text.charAt(0).toUpperCase() + text.slice(1);
  }

  return {
    ApiError,
    explain,
    get: (url, options) => request("GET", url, undefined, options),
    post: (url, body, options) => request("POST", url, body, options),
  };
})();
