// The host facts a test agent sends with its heartbeat when the test is not about them.
export const TEST_HOST_FACTS = {
  cpu_count: 2,
  memory_mb: 2048,
  data_disk_free_gb: 10,
  kernel: '6.1.0',
  docker_version: null,
  agent_version: '0.1.0',
  bridge_netfilter: true,
  clock_skew_ms: 0,
}
