// The Hetzner client's plumbing: a call whose answer is read before use (hetzner-readers.ts), and a
// list followed through every page (page, per_page and meta.pagination.next_page).
import { type Answer, readKey, readPage, type Reader } from './hetzner-readers.js'
import type { CallOptions, HetznerTransport } from './hetzner-transport.js'

/** The API's largest page. */
const PER_PAGE = 50

/**
 * Sends `method path` and reads the answer's `key`; a 404 is undefined when `allowNotFound`. An answer
 * that does not read is PROVIDER_RESPONSE_INVALID, ambiguous when the call is not idempotent.
 */
export async function callFor<T>(
  transport: HetznerTransport,
  method: string,
  path: string,
  call: CallOptions,
  key: string,
  read: Reader<T>,
  allowNotFound = false,
): Promise<T | undefined> {
  const answer: Answer = { method, path, ambiguous: !call.idempotent }
  const body = await transport.call(method, path, call, allowNotFound)
  if (body === undefined && allowNotFound) return undefined
  return readKey(body, answer, key, read)
}

/** A POST whose answer's `key` is read. */
export async function post<T>(
  transport: HetznerTransport,
  path: string,
  body: unknown,
  idempotent: boolean,
  key: string,
  read: Reader<T>,
): Promise<T> {
  return (await callFor(transport, 'POST', path, { body, idempotent }, key, read))!
}

/** Every page of a list: page, per_page and meta.pagination.next_page, each item read. */
export async function listAll<T>(
  transport: HetznerTransport,
  path: string,
  key: string,
  read: Reader<T>,
  query: CallOptions['query'] = {},
): Promise<T[]> {
  const answer: Answer = { method: 'GET', path, ambiguous: false }
  const items: T[] = []
  let page: number | null = 1
  while (page) {
    const body = await transport.call('GET', path, {
      query: { ...query, page, per_page: PER_PAGE },
      idempotent: true,
    })
    const { items: found, nextPage }: { items: T[]; nextPage: number | null } = readPage(body, answer, key, read, page)
    items.push(...found)
    page = nextPage
  }
  return items
}
