// Where published releases live: <state dir>/releases/<version>/, written by `fleetkit release publish`
// (publish-release.ts) and served by the gateway's enrollment listener (src/gateway/routes/release-routes.ts).
import { join } from 'node:path'

export function releasesDirOf(stateDir: string): string {
  return join(stateDir, 'releases')
}
