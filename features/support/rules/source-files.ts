// Walks a project tree for the files the registry rules read, skipping what is
// generated or vendored, and yields each with its path relative to the root.
import { readdir, readFile } from 'node:fs/promises'
import { join, relative } from 'node:path'

export interface SourceFile {
  path: string
  text: string
}

const SKIP_DIRS = new Set(['node_modules', 'dist', '.git', '.cache', 'coverage', '.state'])

export async function readTree(root: string, dirs: string[], extensions: RegExp): Promise<SourceFile[]> {
  const files: SourceFile[] = []
  async function walk(dir: string): Promise<void> {
    let entries
    try {
      entries = await readdir(dir, { withFileTypes: true })
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return
      throw error
    }
    for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      const full = join(dir, entry.name)
      if (entry.isDirectory()) {
        if (!SKIP_DIRS.has(entry.name)) await walk(full)
      } else if (entry.isFile() && extensions.test(entry.name)) {
        files.push({ path: relative(root, full), text: await readFile(full, 'utf8') })
      }
    }
  }
  for (const dir of dirs) await walk(join(root, dir))
  return files
}

export function lineOf(text: string, index: number): number {
  let line = 1
  for (let i = 0; i < index; i++) if (text.charCodeAt(i) === 10) line++
  return line
}
