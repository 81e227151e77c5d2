// Whether files changed since they were last read, from stat alone: the gateway looks at its PKI files
// and ticket keys every 2 s, and reading, checking and hashing them each time was most of what an idle
// gateway did (docs/performance.md, issue 40). A write, a rename over a file, a chmod or a chown each
// change its inode's ctime; a file made or removed changes the directory's.
import { stat } from 'node:fs/promises'

/**
 * A file whose ctime is this close to now may change again within the same timestamp (file systems keep
 * it in coarse ticks), so its signature would not show the change: such a look is not trusted.
 */
export const SETTLE_MS = 2000

/**
 * The stat signature of `paths` (device, inode, size, mode, owner, mtime and ctime in nanoseconds; `-`
 * for one that does not exist), or undefined when one cannot be trusted: changed within SETTLE_MS of
 * `nowMs`, or not stat-able for another reason than its absence (the read that follows reports why).
 */
export async function statSignature(paths: readonly string[], nowMs: number): Promise<string | undefined> {
  const parts: string[] = []
  const settledBefore = BigInt(nowMs - SETTLE_MS) * 1_000_000n
  for (const path of paths) {
    let info
    try {
      info = await stat(path, { bigint: true })
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        parts.push('-')
        continue
      }
      return undefined
    }
    if (info.ctimeNs >= settledBefore || info.mtimeNs >= settledBefore) return undefined
    parts.push(
      `${info.dev}:${info.ino}:${info.size}:${info.mode}:${info.uid}:${info.gid}:${info.mtimeNs}:${info.ctimeNs}`,
    )
  }
  return parts.join('|')
}
