// RFC 6901 JSON pointers: how every definition error names the place it is about.
// Segments are escaped (~ as ~0, / as ~1) so pool names and keys round-trip.

export function pointer(...segments: Array<string | number>): string {
  return segments.map((s) => `/${escapeSegment(String(s))}`).join('')
}

export function childPointer(parent: string, ...segments: Array<string | number>): string {
  return parent + pointer(...segments)
}

export function escapeSegment(segment: string): string {
  // Nearly every key and index needs no escape: skip the two replaces (the walks call this per value).
  if (!segment.includes('~') && !segment.includes('/')) return segment
  return segment.replace(/~/g, '~0').replace(/\//g, '~1')
}

export function parsePointer(path: string): string[] {
  if (path === '') return []
  return path
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
}

/** True when `path` is `ancestor` or lies under it. */
export function isWithin(path: string, ancestor: string): boolean {
  return path === ancestor || path.startsWith(`${ancestor}/`)
}
