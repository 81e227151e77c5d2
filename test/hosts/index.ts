// The test-host helper: disposable container (systemd-nspawn) and VM (QEMU) hosts booted from one
// cached golden rootfs, for suites that converge real hosts with Ansible. API: test/hosts/README.md.
export type { ContainerHost, HostSeed, OperatorKey, ProbeFrom, ProbeResult, TestHost, VmHost } from './types.js'
export { type ContainerHostOptions, startContainerHosts } from './container.js'
export { GUEST_HOST_ADDRESS, type VmHostOptions, startVmHost } from './vm.js'
export {
  type HostVars,
  type Inventory,
  type PlaybookOptions,
  type PlaybookResult,
  type PlayRecap,
  ANSIBLE_DIR,
  parseRecap,
  runPlaybook,
  writeInventory,
} from './ansible.js'
export { BRIDGE, ensureBridge, OPERATOR_ADDRESS, PREFIX_LENGTH, probeTcp, strangerAddress } from './network.js'
export { startListener, stopListener } from './listener.js'
export { assertHostsAvailable, missingForHosts } from './requirements.js'
export { runningHosts, stopAllHosts } from './registry.js'
export { HOST_RELEASES, type HostRelease, IMAGE_PACKAGES, goldenImage, imagePackages, vmBaseImage } from './rootfs.js'
export { MINIMAL_USER_DATA } from './seed.js'
