// The firewall role's template rendered by Ansible on this machine (connection local, into a temp
// folder) for inputs the container suite does not reach (IPv6 operators, publicSsh, the tailnet,
// UDP ports), each checked by `nft -c -f` against this kernel; and the refusal of inputs that
// admit SSH from nowhere. Nothing here touches this machine's ruleset (-c checks only).
import assert from 'node:assert/strict'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

import { stringify } from 'yaml'

import { runProcess } from '../../support/process.js'

const ANSIBLE_DIR = fileURLToPath(new URL('../../../ansible', import.meta.url))
const ROLE = join(ANSIBLE_DIR, 'roles', 'firewall')

async function renderRules(
  dir: string,
  name: string,
  vars: Record<string, unknown>,
): Promise<{ code: number | null; rules: string; output: string }> {
  const out = join(dir, `${name}.nft`)
  const playbook = join(dir, `${name}.yml`)
  await writeFile(
    playbook,
    stringify([
      {
        name: 'Render the firewall rules',
        hosts: 'localhost',
        connection: 'local',
        gather_facts: false,
        vars,
        tasks: [
          { name: 'Read the role defaults', 'ansible.builtin.include_vars': join(ROLE, 'defaults', 'main.yml') },
          {
            name: 'Render',
            'ansible.builtin.template': {
              src: join(ROLE, 'templates', 'fleetkit.nft.j2'),
              dest: out,
              mode: '0600',
              validate: 'nft -c -f %s',
            },
          },
        ],
      },
    ]),
  )
  const result = await runProcess('ansible-playbook', ['-i', 'localhost,', playbook], {
    env: {
      ...process.env,
      ANSIBLE_CONFIG: join(ANSIBLE_DIR, 'ansible.cfg'),
      ANSIBLE_NOCOLOR: '1',
      ANSIBLE_LOCAL_TEMP: join(dir, '.tmp'),
      ANSIBLE_REMOTE_TEMP: join(dir, '.tmp'),
    },
    timeoutMs: 120_000,
  })
  const rules = result.code === 0 ? await readFile(out, 'utf8') : ''
  return { code: result.code, rules, output: result.stdout + result.stderr }
}

describe('firewall role: rendered rules', function () {
  this.timeout(120_000)
  let dir: string

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-firewall-render-'))
  })
  after(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('renders IPv4 and IPv6 operator sets, UDP public ports and the tailnet, and nft accepts them', async function () {
    const { code, rules, output } = await renderRules(dir, 'mixed', {
      fleetkit_operator_cidrs: ['203.0.113.0/24', '2001:db8:1::/48'],
      fleetkit_exposure: {
        publicPorts: [
          { protocol: 'udp', port: 51820 },
          { protocol: 'tcp', port: 8443 },
        ],
      },
      fleetkit_features: { tailscale: true },
      ansible_port: 2222,
    })
    assert.equal(code, 0, output)
    assert.match(rules, /set operators_v4 \{[^}]*elements = \{ 203\.0\.113\.0\/24 \}/)
    assert.match(rules, /set operators_v6 \{[^}]*elements = \{ 2001:db8:1::\/48 \}/)
    assert.match(rules, /ip saddr @operators_v4 tcp dport 2222 accept/)
    assert.match(rules, /ip6 saddr @operators_v6 tcp dport 2222 accept/)
    assert.match(rules, /iifname "tailscale0" tcp dport 2222 accept/)
    assert.match(rules, /udp dport \{ 51820 \} accept/)
    assert.match(rules, /tcp dport \{ 8443 \} accept/)
    assert.doesNotMatch(rules, /dport \{ 80, 443 \}/, 'a non-ingress host opened the web')
    // Only our table: created if missing, deleted and recreated in the same transaction; no flush.
    assert.match(rules, /^table inet fleetkit \{\}\ndelete table inet fleetkit\n/m)
    assert.doesNotMatch(rules, /flush ruleset|^table (ip|ip6|inet) (?!fleetkit)/m)
  })

  it('publicSsh opens SSH to everyone and an ingress host answers 80/443', async function () {
    const { code, rules, output } = await renderRules(dir, 'public', {
      fleetkit_operator_cidrs: ['2001:db8::/32'],
      fleetkit_exposure: { publicSsh: true },
      fleetkit_ingress: true,
    })
    assert.equal(code, 0, output)
    assert.match(rules, /^\s*tcp dport 22 accept/m)
    assert.doesNotMatch(rules, /set operators_v4/, 'an empty IPv4 set would not load')
    assert.match(rules, /tcp dport \{ 80, 443 \} accept/)
    assert.match(rules, /ct original proto-dst \{ 80, 443 \} accept/)
  })

  it('refuses inputs that admit SSH from nowhere with FIREWALL_INPUT_INVALID, before anything else', async function () {
    const playbook = join(dir, 'nowhere.yml')
    await writeFile(
      playbook,
      stringify([
        {
          name: 'Refuse',
          hosts: 'localhost',
          connection: 'local',
          gather_facts: false,
          vars: { fleetkit_operator_cidrs: [] },
          roles: [{ role: ROLE }],
        },
      ]),
    )
    // --check: even a broken refusal would change nothing on this machine.
    const result = await runProcess('ansible-playbook', ['-i', 'localhost,', '--check', playbook], {
      env: {
        ...process.env,
        ANSIBLE_CONFIG: join(ANSIBLE_DIR, 'ansible.cfg'),
        ANSIBLE_NOCOLOR: '1',
        ANSIBLE_LOCAL_TEMP: join(dir, '.tmp'),
        ANSIBLE_REMOTE_TEMP: join(dir, '.tmp'),
      },
      timeoutMs: 120_000,
    })
    assert.notEqual(result.code, 0)
    assert.match(result.stdout, /FIREWALL_INPUT_INVALID: no operator CIDRs, no publicSsh and no tailnet/)
    // Only the argument check ran before the refusal.
    assert.match(result.stdout, /ok=1 +changed=0 +unreachable=0 +failed=1/)
  })
})
