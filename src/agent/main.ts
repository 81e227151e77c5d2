// fleetkit-agent's entry: parse argv, load the configuration, run one subcommand, and
// print failures as `Error (CODE): message` with the exit code the registry gives the code.
import 'reflect-metadata'

import { FleetkitError, toFleetkitError } from '../checks/fleetkit-error.js'
import { systemClock } from '../config/clock.js'
import { systemRng } from '../config/rng.js'
import { type Logger, createLogger } from '../log/logger.js'
import { parseArgv } from './argv.js'
import { systemCommandRunner } from './command-runner.js'
import { type AgentConfig, SETTINGS, loadAgentConfig, requireSettings } from './config.js'
import { formatCheckLine, runDoctor } from './doctor.js'
import { enroll } from './enroll.js'
import type { Host } from './host.js'
import { loadIdentity } from './identity.js'
import { renewCertificate } from './renew.js'
import { IDENTITY_REFUSED_EXIT, identityRefusalLog, isIdentityRefusal } from './identity-refusal.js'
import { runAgent } from './run-loop.js'
import { AgentSession } from './session.js'
import { AGENT_VERSION } from './version.js'

const HELP = `fleetkit-agent ${AGENT_VERSION}: the fleetkit host agent

Usage: fleetkit-agent <command> [--config FILE] [--setting VALUE ...]

Commands:
  enroll              generate a key, enroll with the single-use secret, stage the identity (no-op once enrolled)
  run                 heartbeat, lease and run jobs, renew the certificate; runs until stopped
  renew-certificate   one renewal attempt now (the gateway decides whether it is due)
  doctor              check this host and the agent's identity and gateway, one line per check
  --version           print the version

Settings (flag, environment / agent.env key, default):
  --config FILE                 FLEETKIT_AGENT_CONFIG   /etc/fleetkit/agent.env
${SETTINGS.map((s) => `  --${s.flag.padEnd(28)}${s.env.padEnd(40)}${s.default ?? ''}`).join('\n')}
`

const BOOLEAN_FLAGS = new Set(['version', 'help'])
const VALUE_FLAGS = new Set(['config', ...SETTINGS.map((s) => s.flag)])

export async function main(argv: readonly string[], env: Record<string, string | undefined>): Promise<number> {
  // stderr, so journald keeps each line whole and stdout stays the command's answer.
  const log = createLogger({ component: 'agent', env, destination: 2 })
  try {
    const parsed = parseArgv(argv, BOOLEAN_FLAGS, VALUE_FLAGS)
    if (parsed.booleans.has('version')) {
      process.stdout.write(`${AGENT_VERSION}\n`)
      return 0
    }
    if (parsed.booleans.has('help') || parsed.command === undefined || parsed.command === 'help') {
      process.stdout.write(HELP)
      return parsed.command === undefined && !parsed.booleans.has('help') ? 2 : 0
    }
    const config = loadAgentConfig({ env, flags: parsed.flags })
    const host: Host = { root: config.hostRoot, run: systemCommandRunner() }
    switch (parsed.command) {
      case 'enroll': {
        const result = await enroll(config, { log })
        process.stdout.write(
          result.outcome === 'enrolled'
            ? `enrolled ${config.nodeId}; certificate valid until ${result.notAfter}\n`
            : `already enrolled: identity staged in ${config.pkiDir}\n`,
        )
        return 0
      }
      case 'run':
        return await runUntilSignal(config, host, log)
      case 'renew-certificate':
        return await renewOnce(config, log)
      case 'doctor': {
        const results = await runDoctor(config, { host, now: () => new Date() })
        for (const result of results) process.stdout.write(`${formatCheckLine(result)}\n`)
        return results.some((result) => result.status === 'fail') ? 1 : 0
      }
      default:
        throw new FleetkitError('USAGE_INVALID', `unknown command ${JSON.stringify(parsed.command)}`, {
          actions: ['fleetkit-agent --help'],
        })
    }
  } catch (error) {
    const e = toFleetkitError(error)
    log('error', 'agent_failed', { code: e.code, message: e.message, ...(e.data ? { data: e.data } : {}) })
    process.stderr.write(
      `Error (${e.code}): ${e.message}\nTry this:\n${e.actions.map((action) => `  ${action}\n`).join('')}`,
    )
    if (env.FLEETKIT_DEBUG) process.stderr.write(`${(e.cause instanceof Error ? e.cause : e).stack}\n`)
    return e.exitCode
  }
}

async function runUntilSignal(config: AgentConfig, host: Host, log: Logger): Promise<number> {
  const controller = new AbortController()
  const stop = (signal: string) => {
    log('info', 'agent_stopping', { signal })
    controller.abort()
  }
  process.once('SIGTERM', () => stop('SIGTERM'))
  process.once('SIGINT', () => stop('SIGINT'))
  try {
    await runAgent(config, { log, clock: systemClock, rng: systemRng, host, signal: controller.signal })
  } catch (error) {
    const e = toFleetkitError(error)
    if (!isIdentityRefusal(e)) throw e
    // Logged once: systemd does not restart this exit status (fleetkit-agent.service), so nothing repeats it.
    log('error', 'agent_identity_refused', identityRefusalLog(config.nodeId, e))
    process.stderr.write(
      `Error (${e.code}): ${e.message}\nTry this:\n${e.actions.map((action) => `  ${action}\n`).join('')}`,
    )
    return IDENTITY_REFUSED_EXIT
  }
  return 0
}

async function renewOnce(config: AgentConfig, log: Logger): Promise<number> {
  requireSettings(config, ['nodeId', 'gatewayUrl'])
  const session = new AgentSession(config, await loadIdentity(config.pkiDir, config.caFile))
  try {
    const outcome = await renewCertificate(session, log)
    process.stdout.write(
      outcome.outcome === 'renewed'
        ? `renewed: serial ${outcome.serial}, valid until ${outcome.notAfter}\n`
        : 'not due: the gateway renews only in the last third of the lifetime\n',
    )
    return 0
  } finally {
    session.close()
  }
}

// No top-level await: the bundle is CommonJS so it runs as an extensionless file on Node 18.
void main(process.argv.slice(2), process.env).then((exitCode) => {
  // Let stdout/stderr drain; open keep-alive sockets must not hold the process.
  process.exitCode = exitCode
  setTimeout(() => process.exit(exitCode), 100).unref()
})
