// The one rule for who runs a command (src/cli/actor.ts), with the environment, the account and the
// host name injected: FLEETKIT_ACTOR, else user@host, whatever the process's environment lacks.
import assert from 'node:assert/strict'

import { actorOf, type ActorHost } from '../../../src/cli/actor.js'

function host(overrides: Partial<ActorHost> = {}): ActorHost {
  return { userName: () => 'svc', uid: () => 1001, hostname: () => 'ops-1', ...overrides }
}

describe('cli: actorOf', () => {
  it('FLEETKIT_ACTOR wins over everything (automation names itself), trimmed', () => {
    assert.equal(actorOf({ FLEETKIT_ACTOR: '  ci-deploy ', USER: 'alice' }, host()), 'ci-deploy')
  })

  it('else user@host, the user from $USER, else $LOGNAME', () => {
    assert.equal(actorOf({ USER: 'alice', LOGNAME: 'bob' }, host()), 'alice@ops-1')
    assert.equal(actorOf({ LOGNAME: 'bob' }, host()), 'bob@ops-1')
    // `sudo fleetkit ...` runs with USER=root: the person is SUDO_USER.
    assert.equal(actorOf({ SUDO_USER: 'carol', USER: 'root', LOGNAME: 'root' }, host()), 'carol@ops-1')
    assert.equal(actorOf({ FLEETKIT_ACTOR: ' ', USER: ' ', LOGNAME: 'bob' }, host()), 'bob@ops-1')
  })

  it("without $USER and $LOGNAME (a container, a systemd unit) it is the process's account, never `unknown`", () => {
    assert.equal(actorOf({}, host()), 'svc@ops-1')
    const noPasswdEntry = host({
      userName: () => {
        throw new Error('ENOENT: no such file or directory, uv_os_get_passwd')
      },
    })
    assert.equal(actorOf({}, noPasswdEntry), 'uid 1001@ops-1')
    assert.equal(actorOf({}, host({ userName: () => '', uid: () => undefined })), 'uid ?@ops-1')
  })

  it('a host name that cannot be read is localhost', () => {
    const broken = host({
      hostname: () => {
        throw new Error('EPERM')
      },
    })
    assert.equal(actorOf({ USER: 'alice' }, broken), 'alice@localhost')
  })

  it('control characters become spaces and the actor is cut at 64 characters', () => {
    assert.equal(actorOf({ FLEETKIT_ACTOR: 'eve\nINFO forged line' }, host()), 'eve INFO forged line')
    assert.equal(actorOf({ FLEETKIT_ACTOR: 'x'.repeat(100) }, host()).length, 64)
  })

  it('reads the real process when nothing is injected', () => {
    assert.match(actorOf({ USER: 'alice' }), /^alice@\S+/)
  })
})
