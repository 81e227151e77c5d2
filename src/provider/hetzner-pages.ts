// The Hetzner client's plumbing: a POST that must answer with a body, and a list followed through
// every page (page, per_page and meta.pagination.next_page).
import { FleetkitError } from '../checks/fleetkit-error.js'
import type { CallOptions, HetznerTransport } from './hetzner-transport.js'

/** The API's largest page. */
const PER_PAGE = 50

interface Page {
  meta?: { pagination?: { next_page?: number | null } }
}

export async function post<T>(
  transport: HetznerTransport,
  path: string,
  body: unknown,
  idempotent: boolean,
): Promise<T> {
  const answer = await transport.call<T>('POST', path, { body, idempotent })
  if (answer === undefined)
    throw new FleetkitError('PROVIDER_ERROR', `Hetzner Cloud answered POST ${path} without a body`)
  return answer
}

/** Every page of a list: page, per_page and meta.pagination.next_page. */
export async function listAll<T>(
  transport: HetznerTransport,
  path: string,
  key: string,
  query: CallOptions['query'] = {},
): Promise<T[]> {
  const items: T[] = []
  let page: number | null | undefined = 1
  while (page) {
    const body: (Page & Record<string, unknown>) | undefined = await transport.call<Page & Record<string, unknown>>(
      'GET',
      path,
      { query: { ...query, page, per_page: PER_PAGE }, idempotent: true },
    )
    const list = body?.[key]
    if (!Array.isArray(list))
      throw new FleetkitError('PROVIDER_ERROR', `Hetzner Cloud answered GET ${path} without ${key}`)
    items.push(...(list as T[]))
    const next: number | null | undefined = body?.meta?.pagination?.next_page
    page = next && next > page ? next : null
  }
  return items
}
