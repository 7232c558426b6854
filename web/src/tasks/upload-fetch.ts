// A fetch made with XMLHttpRequest, which reports an upload's progress (fetch has no such event).

/** The upload's progress: bytes sent of the body's total. */
export type UploadProgress = (sent: number, total: number) => void;

/** Statuses whose Response may have no body. */
const NO_BODY = new Set([101, 204, 205, 304]);

function responseHeaders(raw: string): Headers {
  const headers = new Headers();
  for (const line of raw.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    try {
      headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
    } catch {
      // A header name fetch would refuse: not one the client reads.
    }
  }
  return headers;
}

/**
 * A `fetch` for one call of the API client (`CallOptions.fetch`) that tells `onProgress` how much
 * of the request body has gone. Same-origin only: the browser sends the page's cookies with it.
 * A failure without an answer rejects with a TypeError, as fetch's does.
 */
export function uploadFetch(onProgress: UploadProgress): typeof fetch {
  return (input, init = {}) =>
    new Promise<Response>((resolve, reject) => {
      const signal = init.signal;
      if (signal?.aborted) return reject(signal.reason);
      const request = new XMLHttpRequest();
      request.open(init.method ?? 'GET', String(input));
      for (const [name, value] of new Headers(init.headers)) request.setRequestHeader(name, value);
      // Listened to before send(): a listener added later is never told.
      request.upload.addEventListener('progress', (event) => {
        if (event.lengthComputable) onProgress(event.loaded, event.total);
      });
      request.addEventListener('load', () => {
        const body = NO_BODY.has(request.status) ? null : request.responseText;
        resolve(
          new Response(body, {
            status: request.status,
            statusText: request.statusText,
            headers: responseHeaders(request.getAllResponseHeaders()),
          }),
        );
      });
      const failed = () => reject(new TypeError('The request failed without an answer.'));
      request.addEventListener('error', failed);
      request.addEventListener('timeout', failed);
      signal?.addEventListener(
        'abort',
        () => {
          request.abort();
          reject(signal.reason);
        },
        { once: true },
      );
      request.send((init.body as XMLHttpRequestBodyInit | null | undefined) ?? null);
    });
}
