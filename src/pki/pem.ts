// PEM text: encode DER under a label, and split a bundle into its blocks.
// Kept apart so trust bundles and key files share one strict reader.

const BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----\r?\n([A-Za-z0-9+/=\r\n]+?)-----END \1-----/g

export interface PemBlock {
  label: string
  der: Buffer
}

export function pemEncode(label: string, der: ArrayBuffer | Uint8Array): string {
  const base64 = Buffer.from(der instanceof ArrayBuffer ? new Uint8Array(der) : der).toString('base64')
  const lines = base64.match(/.{1,64}/g) ?? []
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`
}

/** Every PEM block in the text, in order; text between blocks is ignored. */
export function pemBlocks(text: string): PemBlock[] {
  const blocks: PemBlock[] = []
  for (const match of text.matchAll(BLOCK)) {
    blocks.push({ label: match[1]!, der: Buffer.from(match[2]!.replace(/\s+/g, ''), 'base64') })
  }
  return blocks
}

/** The certificates of a bundle, each re-encoded as canonical PEM. */
export function certificatePems(text: string): string[] {
  return pemBlocks(text)
    .filter((b) => b.label === 'CERTIFICATE')
    .map((b) => pemEncode('CERTIFICATE', b.der))
}
