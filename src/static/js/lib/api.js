// The JSON API client. Every error becomes an ApiError carrying the server's code and message;
// a 401 (signed out) also sends the person to the sign-in page.
import { requireSignIn } from './auth.js';
import { errorMessage, t } from './i18n.js';
import { unlessLeaving } from './leaving.js';

/** A failed request: `status` (0 for network errors), stable `code`, readable `message`. */
export class ApiError extends Error {
  constructor(status, code, message, data = null) {
    super(message);
    this.status = status;
    this.code = code;
    this.data = data;
  }
}

/** Sends one request; returns `{status, data, headers}` or throws ApiError. */
export async function request(method, path, { body, headers = {} } = {}) {
  const init = { method, headers: { Accept: 'application/json', ...headers }, credentials: 'same-origin' };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch {
    throw await unreachable();
  }
  let data;
  try {
    data = await readJson(response);
  } catch {
    throw await unreachable(); // the body was cut off (a dropped connection, or the page left)
  }
  if (response.status === 401) {
    requireSignIn();
    throw new ApiError(401, 'signed_out', t('errors.signed_out'), data);
  }
  if (!response.ok) {
    const error = (data && data.error) || {};
    const code = error.code || `http_${response.status}`;
    const message = error.message || t('errors.request_failed', { status: response.status });
    throw new ApiError(response.status, code, errorMessage(code, message, error), data);
  }
  return { status: response.status, data, headers: response.headers };
}

/** The error for a request that got no answer. A request cut off because the page is being left
 * (reload, navigation) is no failure to report: its promise settles only if the page stays. */
export async function unreachable() {
  await unlessLeaving();
  return new ApiError(0, 'network_error', t('errors.network_error'));
}

async function readJson(response) {
  if (response.status === 204) return null;
  const text = await response.text();
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

async function dataOf(method, path, body) {
  return (await request(method, path, { body })).data;
}

export const api = {
  get: (path) => dataOf('GET', path),
  post: (path, body = {}) => dataOf('POST', path, body),
  put: (path, body) => dataOf('PUT', path, body),
  patch: (path, body) => dataOf('PATCH', path, body),
  del: (path) => dataOf('DELETE', path),
};

/** Sends `file` as multipart field `file`; returns the JSON answer or throws ApiError. */
export async function sendFile(method, path, file) {
  const form = new FormData();
  form.append('file', file);
  let response;
  try {
    response = await fetch(path, { method, body: form, credentials: 'same-origin', headers: { Accept: 'application/json' } });
  } catch {
    throw await unreachable();
  }
  const data = await response.json().catch(() => null);
  if (!response.ok) {
    const error = (data && data.error) || {};
    const code = error.code || `http_${response.status}`;
    const message = error.message || t('settings.cards.upload_failed', { status: response.status });
    throw new ApiError(response.status, code, errorMessage(code, message, error), data);
  }
  return data;
}

/** A list from a response that is either the list itself or `{[key]: list}`. */
export function listOf(data, key) {
  if (Array.isArray(data)) return data;
  if (data && Array.isArray(data[key])) return data[key];
  return [];
}

/** Encodes one path segment. */
export function seg(value) {
  return encodeURIComponent(String(value));
}
