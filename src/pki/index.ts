// The public face of src/pki, for commands and the gateway to import lazily
// (`await import('../pki/index.js')`): x509 loads only when PKI work is done.
export { createCertificateAuthority, loadIssuingCa, selfTestIssuingCa, type IssuingCa } from './certificate-authority.js'
export { checkCertificateRequest, type CsrCheck } from './csr.js'
export { issueClientCertificate, type IssuedCertificate } from './client-certificate.js'
export { issueServerCertificate, serverCertificateNames } from './server-certificate.js'
export { buildTrustBundle, bundleFingerprints } from './trust-bundle.js'
export { certificateFingerprintSha256, derFingerprintSha256, sha256Hex } from './fingerprint.js'
export { loadPkiSet, buildPkiSet, type PkiSet } from './pki-set.js'
export { initPki, type InitPkiResult } from './init-pki.js'
export { PKI_FILE_NAMES, readPrivateKeyFile } from './pki-files.js'
