// The API, read with the key the person signed in with. The key lives in sessionStorage only (it
// goes when the tab closes, and "Sign out" forgets it at once); it is sent in the Authorization
// header of requests to this origin and nowhere else.

const KEY = "evalsvc.apiKey";
const BASE = document.querySelector('meta[name="evalsvc-api-base"]')?.content ?? "/v1";

export class ApiError extends Error {
  // kind: "unauthorized" (401), "network" (no answer), "http" (any other error status)
  constructor(kind, status, message) {
    super(message);
    this.kind = kind;
    this.status = status;
  }
}

export const session = {
  key() {
    try {
      return sessionStorage.getItem(KEY);
    } catch {
      return null;
    }
  },
  signIn(key) {
    sessionStorage.setItem(KEY, key);
  },
  signOut() {
    try {
      sessionStorage.removeItem(KEY);
    } catch {
      // storage disabled: nothing was kept
    }
  },
};

// GET (or another method with a JSON body) `path` under the API's base; the parsed JSON body, or
// an ApiError saying what went wrong in words a person can act on. `reviver`, when given, is
// JSON.parse's (the review page reads its pairs' tool calls with conversation.js' exactNumbers).
export async function api(path, {method = "GET", body, key, signal, reviver} = {}) {
  const secret = key ?? session.key();
  const headers = {Accept: "application/json"};
  if (secret) headers.Authorization = secret;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let response;
  try {
    response = await fetch(BASE + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: "no-store",
      credentials: "omit",
      redirect: "error",
      referrerPolicy: "no-referrer",
      signal,
    });
  } catch (error) {
    if (error?.name === "AbortError") throw error;
    throw new ApiError(
      "network",
      0,
      "The service could not be reached. Check your connection (or that the server is running), then try again.",
    );
  }
  let data = null;
  try {
    data = reviver ? JSON.parse(await response.text(), reviver) : await response.json();
  } catch {
    data = null;
  }
  if (response.ok) {
    if (data === null) throw new ApiError("http", response.status, "The service sent an answer this page cannot read. Try again.");
    return data;
  }
  const said = data && typeof data.error === "string" ? data.error : "";
  if (response.status === 401) {
    throw new ApiError("unauthorized", 401, said || "The API key was not accepted.");
  }
  const message = said
    ? `${said} (HTTP ${response.status})`
    : `The service answered HTTP ${response.status}. Try again in a moment.`;
  throw new ApiError("http", response.status, message);
}

export function query(parameters) {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(parameters)) {
    if (value !== null && value !== undefined && value !== "") search.set(name, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}

export const path = (strings, ...values) =>
  strings.reduce((out, part, i) => out + part + (i < values.length ? encodeURIComponent(values[i]) : ""), "");
