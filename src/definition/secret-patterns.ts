// Recognises values that are secrets (private keys, tokens, credentials, .env payloads).
// Returns only the kind, never the match, so a caller cannot leak the value by accident.

export type SecretKind =
  | 'pem-private-key'
  | 'openssh-private-key'
  | 'github-token'
  | 'hetzner-token'
  | 'aws-access-key'
  | 'jwt'
  | 'slack-token'
  | 'url-credentials'
  | 'env-payload'

interface Detector {
  kind: SecretKind
  pattern: RegExp
}

// Order matters: the first match names the kind, so the specific ones come first.
const DETECTORS: readonly Detector[] = [
  { kind: 'openssh-private-key', pattern: /-----BEGIN OPENSSH PRIVATE KEY-----|b3BlbnNzaC1rZXktdjE/ },
  { kind: 'pem-private-key', pattern: /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----/ },
  { kind: 'github-token', pattern: /\bgh[pousr]_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{22,}/ },
  { kind: 'aws-access-key', pattern: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/ },
  { kind: 'slack-token', pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,}/ },
  { kind: 'jwt', pattern: /\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/ },
  // Anchored on `://`, with the scheme (at most 32 characters) looked for behind it only there: the
  // unanchored `\b[a-z][a-z0-9+.-]*://` scanned to the end of the text from every word start, quadratic in
  // a long value ('a.' repeated 80,000 times took 40 s). Each part after `://` ends at a character the
  // next one needs, so no part is tried twice over the same text: linear.
  { kind: 'url-credentials', pattern: /:\/\/(?<=\b[a-z][a-z0-9+.-]{0,31}:\/\/)[^\s/:@]+:[^\s/@]+@/i },
  // Hetzner Cloud API tokens are 64 letters and digits; other vendors' opaque tokens look alike.
  { kind: 'hetzner-token', pattern: /(?<![A-Za-z0-9+/])[A-Za-z0-9]{64}(?![A-Za-z0-9+/])/ },
]

// An OpenSSH public key line (type, base64, optional comment) is not a secret, and its
// base64 body can hold long alphanumeric runs that look like a token.
const PUBLIC_KEY_LINE = /^(?:ssh-[a-z0-9-]+|ecdsa-sha2-[a-z0-9-]+|sk-[a-z0-9.@-]+) [A-Za-z0-9+/]+={0,3}(?: [^\n]*)?$/

const ENV_LINE = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$/
const SECRET_ENV_NAME = /TOKEN|SECRET|PASSW|API_?KEY|PRIVATE|CREDENTIAL|DATABASE_URL|AUTH/i

function isPublicKeyLine(value: string): boolean {
  return PUBLIC_KEY_LINE.test(value.trim())
}

/** The kind of secret `value` holds, or undefined. */
export function detectSecret(value: string): SecretKind | undefined {
  // Fast path for the many short plain values (ids, names, states): the shortest token any
  // detector matches is 15 characters, and shorter .env lines and URLs need '=' or '@'.
  if (value.length < 15 && !value.includes('=') && !value.includes('@')) return undefined
  if (isPublicKeyLine(value)) return undefined
  for (const detector of DETECTORS) if (detector.pattern.test(value)) return detector.kind
  return looksLikeEnvPayload(value) ? 'env-payload' : undefined
}

/** `KEY=value` lines: two or more of them, or one whose name says it is a secret. */
function looksLikeEnvPayload(value: string): boolean {
  let lines = 0
  for (const line of value.split('\n')) {
    const m = ENV_LINE.exec(line)
    if (!m || m[2]!.trim() === '') continue
    if (SECRET_ENV_NAME.test(m[1]!)) return true
    lines++
  }
  return lines >= 2
}

/** Scan raw text line by line (for a file that does not parse): 1-based line numbers and kinds. */
export function scanTextForSecrets(text: string): Array<{ line: number; kind: SecretKind }> {
  const found: Array<{ line: number; kind: SecretKind }> = []
  const lines = text.split('\n')
  let insideKeyBlock = false
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    // The body of a private key block is reported once, at its BEGIN line.
    if (insideKeyBlock) {
      if (line.includes('-----END ')) insideKeyBlock = false
      continue
    }
    const value = line.replace(/^\s*(?:-\s+)?(?:[A-Za-z0-9_"'-]+\s*:\s*)?/, '').replace(/^["']|["']$/g, '')
    const kind = detectSecret(value) ?? detectSecret(line.trim())
    if (kind === undefined || isPublicKeyLine(value)) continue
    found.push({ line: i + 1, kind })
    if ((kind === 'pem-private-key' || kind === 'openssh-private-key') && !line.includes('-----END '))
      insideKeyBlock = true
  }
  return found
}
