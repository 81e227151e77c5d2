// The local Hetzner Cloud stub's list answers: label_selector and name filters, then the API's
// pagination (page, per_page, meta.pagination), for every collection alike.
import type { Labels } from './hetzner-types.js'
import { matchesLabels, parseLabelSelector } from './label-selector.js'
import { invalidInput, type StubResponse } from './stub-errors.js'

/** A page of `items` after label_selector, name and `extra`: page, per_page (25, at most 50), meta.pagination. */
export function listPage<T>(
  query: URLSearchParams,
  key: string,
  items: T[],
  extra: (item: T) => boolean = () => true,
): StubResponse {
  const selector = query.get('label_selector')
  const requirements = selector === null ? [] : parseLabelSelector(selector)
  if (!requirements) return invalidInput('label_selector', 'label selector is invalid')
  const name = query.get('name')
  const matching = items.filter((item) => {
    const record = item as { name?: unknown; labels?: Labels }
    if (name !== null && record.name !== name) return false
    if (requirements.length > 0 && !matchesLabels(requirements, record.labels ?? {})) return false
    return extra(item)
  })
  const perPage = Math.min(50, Math.max(1, Number(query.get('per_page') ?? 25) || 25))
  const lastPage = Math.max(1, Math.ceil(matching.length / perPage))
  const page = Math.max(1, Number(query.get('page') ?? 1) || 1)
  const pagination = {
    page,
    per_page: perPage,
    previous_page: page > 1 ? page - 1 : null,
    next_page: page < lastPage ? page + 1 : null,
    last_page: lastPage,
    total_entries: matching.length,
  }
  const body = { [key]: matching.slice((page - 1) * perPage, page * perPage), meta: { pagination } }
  return { status: 200, body }
}
