// A task's ETag and the If-Match that names it (RFC 9110 §8.8.3, §13.1.1): strong tags of the task's version.

/** What an If-Match header asks for: any existing task, or one of these versions. */
export type Precondition =
  | { readonly kind: 'any' }
  | { readonly kind: 'versions'; readonly versions: number[] };

/** The ETag of a task at `version`: strong, and changed exactly when the version is. */
export function etagOf(version: number): string {
  return `"v${version}"`;
}

const TAG = /^\s*(W\/)?"([\x21\x23-\x7e\x80-\xff]*)"\s*$/;
const OURS = /^v([1-9]\d{0,9})$/;

/**
 * The precondition an If-Match header states; undefined when the request sent none. If-Match
 * compares strongly: a weak tag (W/"v3") matches nothing, as does a tag not of this API or a
 * header that is not a list of tags; such a request gets 412 with the task as it is.
 */
export function preconditionOf(header: string | undefined): Precondition | undefined {
  if (header === undefined) return undefined;
  if (header.trim() === '*') return { kind: 'any' };
  const versions: number[] = [];
  for (const part of header.split(',')) {
    const tag = TAG.exec(part);
    if (!tag || tag[1]) continue;
    const ours = OURS.exec(tag[2]!);
    if (ours) versions.push(Number(ours[1]));
  }
  return { kind: 'versions', versions };
}
