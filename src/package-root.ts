// Where fleetkit's own files (schema/, policy/, docs/, ansible/, cloud-init/) live,
// whether running from src/ through tsx or from the compiled dist/.
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const packageRoot = join(dirname(fileURLToPath(import.meta.url)), '..')

export function packagePath(...parts: string[]): string {
  return join(packageRoot, ...parts)
}
