// Where a release is read from: a local directory holding the three files, <url>/<version>/ over
// HTTPS only (each file bounded in size, redirects only to HTTPS), or files already read into memory
// (`fleetkit release publish` verifies the very bytes it then writes).
import { join } from 'node:path'

import { FleetkitError } from '../checks/fleetkit-error.js'
import { readRegularFile } from '../fs/read-regular-file.js'

export type ReleaseSource =
  | { dir: string }
  | { url: string; caFile?: string }
  /** The files by name, read once; `label` names where they came from in messages. */
  | { files: ReadonlyMap<string, Buffer>; label: string }

export interface FetchLimits {
  maxBytes: number
}

const MAX_REDIRECTS = 5
const TIMEOUT_MS = 60_000
/** A CA bundle for a private mirror: a few certificates, far under this. */
const MAX_CA_FILE_BYTES = 1024 * 1024

/** https://host[:port][/path] with no shell or URL metacharacters beyond the path's slashes. */
const RELEASE_URL_PATTERN = /^https:\/\/[A-Za-z0-9.-]+(?::[0-9]{1,5})?(?:\/[A-Za-z0-9._~%/-]*)?$/

function assertReleaseUrl(url: string): string {
  if (!RELEASE_URL_PATTERN.test(url)) {
    throw new FleetkitError(
      'RELEASE_INPUT_INVALID',
      `release URL ${JSON.stringify(displayUrl(url))} is not https://host[:port]/path without query, credentials or shell metacharacters`,
      {
        data: { expected: RELEASE_URL_PATTERN.source, actual: displayUrl(url) },
      },
    )
  }
  return url.replace(/\/+$/, '')
}

export function describeSource(source: ReleaseSource, version: string): string {
  if ('files' in source) return source.label
  return 'dir' in source ? source.dir : `${assertReleaseUrl(source.url)}/${version}/`
}

/**
 * A URL as it may be printed: credentials and the query (a presigned URL's signature,
 * for example after a redirect) replaced by `***`; what does not parse is not shown.
 */
function displayUrl(url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.username) parsed.username = '***'
    if (parsed.password) parsed.password = '***'
    if (parsed.search) parsed.search = '***'
    parsed.hash = ''
    return parsed.toString().replaceAll('%2A%2A%2A', '***')
  } catch {
    return '(a value that is not a URL; not shown)'
  }
}

function downloadFailed(what: string, reason: string, data: Record<string, unknown> = {}): FleetkitError {
  const shown = /^https?:\/\//i.test(what) ? displayUrl(what) : what
  return new FleetkitError('RELEASE_DOWNLOAD_FAILED', `cannot get ${shown}: ${reason}`, {
    data: { file: shown, ...data },
  })
}

function overLimit(path: string, size: number, maxBytes: number): FleetkitError {
  return downloadFailed(path, `${size} bytes is over the limit of ${maxBytes}`, { expected: maxBytes, actual: size })
}

function readLocal(path: string, maxBytes: number): Promise<Buffer> {
  return readRegularFile(path, maxBytes, (why, data) => downloadFailed(path, why, data))
}

function readInMemory(source: { files: ReadonlyMap<string, Buffer>; label: string }, name: string, maxBytes: number) {
  const path = join(source.label, name)
  const bytes = source.files.get(name)
  if (bytes === undefined) throw downloadFailed(path, 'no such file')
  if (bytes.length > maxBytes) throw overLimit(path, bytes.length, maxBytes)
  return bytes
}

async function fetchHttps(url: string, maxBytes: number, ca: Buffer | undefined, redirects = 0): Promise<Buffer> {
  const { request } = await import('node:https')
  return new Promise<Buffer>((resolve, reject) => {
    const req = request(url, { method: 'GET', ca, timeout: TIMEOUT_MS }, (res) => {
      const status = res.statusCode ?? 0
      if (status >= 300 && status < 400 && res.headers.location !== undefined) {
        res.resume()
        const next = new URL(res.headers.location, url).toString()
        if (!next.startsWith('https://'))
          return reject(downloadFailed(url, `redirect to a non-https URL ${displayUrl(next)}`))
        if (redirects >= MAX_REDIRECTS) return reject(downloadFailed(url, 'too many redirects'))
        return fetchHttps(next, maxBytes, ca, redirects + 1).then(resolve, reject)
      }
      if (status !== 200) {
        res.resume()
        return reject(downloadFailed(url, `HTTP ${status}`, { status }))
      }
      const declared = Number(res.headers['content-length'] ?? '0')
      if (declared > maxBytes) {
        res.destroy()
        return reject(
          downloadFailed(url, `${declared} bytes is over the limit of ${maxBytes}`, {
            expected: maxBytes,
            actual: declared,
          }),
        )
      }
      const chunks: Buffer[] = []
      let length = 0
      res.on('data', (chunk: Buffer) => {
        length += chunk.length
        if (length > maxBytes) {
          res.destroy()
          reject(downloadFailed(url, `more than the limit of ${maxBytes} bytes`, { expected: maxBytes }))
          return
        }
        chunks.push(chunk)
      })
      res.on('error', (error) => reject(downloadFailed(url, error.message)))
      res.on('end', () => resolve(Buffer.concat(chunks)))
    })
    req.on('timeout', () => req.destroy(new Error(`no answer in ${TIMEOUT_MS / 1000} s`)))
    req.on('error', (error) => reject(downloadFailed(url, error.message)))
    req.end()
  })
}

/** Reads one file of the release (SHA256SUMS, SHA256SUMS.sig or the archive). */
export async function readReleaseFile(
  source: ReleaseSource,
  version: string,
  name: string,
  limits: FetchLimits,
): Promise<Buffer> {
  if ('files' in source) return readInMemory(source, name, limits.maxBytes)
  if ('dir' in source) return readLocal(join(source.dir, name), limits.maxBytes)
  const base = assertReleaseUrl(source.url)
  let ca: Buffer | undefined
  if (source.caFile !== undefined) {
    const caFile = source.caFile
    ca = await readRegularFile(
      caFile,
      MAX_CA_FILE_BYTES,
      (why) => new FleetkitError('RELEASE_INPUT_INVALID', `cannot read the CA file ${caFile}: ${why}`),
    )
  }
  return fetchHttps(`${base}/${version}/${name}`, limits.maxBytes, ca)
}
