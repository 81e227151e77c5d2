// Look-ups by key that arrive together leave together: the keys asked for within one turn of the
// event loop go to the database as one query (in chunks of `maxBatch`), and concurrent asks for
// the same key share one answer. After a gateway restart every agent's first request misses the
// authentication cache at once; one query per agent would make PostgreSQL, not TLS, the storm's limit.

export type BatchLoad<V> = (keys: string[]) => Promise<Map<string, V>>

interface Waiter<V> {
  resolve: (value: V | undefined) => void
  reject: (error: unknown) => void
}

export class BatchLoader<V> {
  private pending = new Map<string, Waiter<V>[]>()
  private scheduled = false

  constructor(
    private readonly load: BatchLoad<V>,
    private readonly maxBatch = 500,
  ) {}

  /** The value of `key` (undefined when the load did not find it); fails as its batch's load fails. */
  get(key: string): Promise<V | undefined> {
    return new Promise((resolve, reject) => {
      const waiting = this.pending.get(key)
      if (waiting) waiting.push({ resolve, reject })
      else this.pending.set(key, [{ resolve, reject }])
      if (!this.scheduled) {
        this.scheduled = true
        setImmediate(() => this.flush())
      }
    })
  }

  private flush(): void {
    this.scheduled = false
    const batch = this.pending
    this.pending = new Map()
    const keys = [...batch.keys()]
    for (let i = 0; i < keys.length; i += this.maxBatch) {
      const chunk = keys.slice(i, i + this.maxBatch)
      const settle = (each: (waiter: Waiter<V>, key: string) => void) => {
        for (const key of chunk) for (const waiter of batch.get(key)!) each(waiter, key)
      }
      // A load that throws synchronously fails its chunk, like one that rejects.
      Promise.resolve()
        .then(() => this.load(chunk))
        .then(
          (found) => settle((w, key) => w.resolve(found.get(key))),
          (error: unknown) => settle((w) => w.reject(error)),
        )
    }
  }
}
