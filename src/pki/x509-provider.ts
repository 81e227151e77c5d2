// The one place @peculiar/x509 is loaded: the Reflect polyfill first, then Node's
// WebCrypto as its provider, so every pki module signs and verifies the same way.
import 'reflect-metadata'
import { webcrypto } from 'node:crypto'

import * as x509 from '@peculiar/x509'

x509.cryptoProvider.set(webcrypto as unknown as Crypto)

export { x509 }
export const crypto = webcrypto as unknown as Crypto
