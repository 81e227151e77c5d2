// The NoCloud seed files a test host boots with: the test's user-data, meta-data naming the host,
// and (VMs) vendor-data that installs the pinned host key and the operator key without touching the
// test's user-data.
import { stringify } from 'yaml'

import type { HostSeed } from './types.js'

export const MINIMAL_USER_DATA = '#cloud-config\n{}\n'

export interface SeedFiles {
  'user-data': string
  'meta-data': string
  'vendor-data'?: string
  'network-config'?: string
}

export function seedFiles(
  name: string,
  seed: HostSeed | undefined,
  keys?: { hostPrivateKey: string; hostPublicKey: string; operatorPublicKey: string },
): SeedFiles {
  const metaData = { 'instance-id': `iid-${name}`, 'local-hostname': name, ...seed?.metaData }
  const files: SeedFiles = {
    'user-data': seed?.userData ?? MINIMAL_USER_DATA,
    'meta-data': stringify(metaData),
  }
  if (keys) {
    // vendor-data is merged under the user's cloud-config (user-data wins), and applies when the
    // user-data is a script: cc_ssh writes the given host key and root's authorized key before sshd starts.
    files['vendor-data'] = `#cloud-config\n${stringify({
      ssh_deletekeys: true,
      // The host key is given: nothing to generate (an empty list is invalid in cloud-init's schema).
      ssh_genkeytypes: ['ed25519'],
      ssh_keys: { ed25519_private: keys.hostPrivateKey, ed25519_public: keys.hostPublicKey },
      disable_root: false,
      ssh_authorized_keys: [keys.operatorPublicKey],
    })}`
  }
  if (seed?.networkConfig) files['network-config'] = seed.networkConfig
  return files
}
