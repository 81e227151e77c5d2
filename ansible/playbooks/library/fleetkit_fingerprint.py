#!/usr/bin/python3
# fleetkit_fingerprint: one read-only call that digests every resource site.yml manages on a host
# (files, units, packages, users, groups, sysctls, kernel modules, the live nftables table, the
# host's size and release). `fleetkit sync` records it after a full converge and compares it before
# the next: a node whose inputs and fingerprint are unchanged needs no full run (docs/architecture.md).
from __future__ import annotations

DOCUMENTATION = r'''
module: fleetkit_fingerprint
short_description: Digest the state of the resources fleetkit's roles manage on a host
description:
  - Reads, never writes. Each resource gets a short digest; the module returns them and one digest over all.
options:
  resources:
    description: Resources as C(kind) and C(name); kinds are path, unit, package, user, group, sysctl, module, nft, host, tailscale, sshd.
    type: list
    elements: dict
    required: true
'''

import grp
import hashlib
import json
import os
import platform
import pwd
import stat
import subprocess
import sys
import tempfile
import time
from resource import RUSAGE_CHILDREN, RUSAGE_SELF, getrusage

try:
    from ansible.module_utils.basic import AnsibleModule
except ImportError:  # run directly by `fleetkit sync` over node-ssh (src/sync/fingerprint-probe.ts): no Ansible on the host
    AnsibleModule = None


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _path(name: str) -> str:
    try:
        st = os.lstat(name)
    except FileNotFoundError:
        return 'absent'
    head = f'{stat.S_IFMT(st.st_mode):o}:{stat.S_IMODE(st.st_mode):o}:{st.st_uid}:{st.st_gid}'
    if stat.S_ISLNK(st.st_mode):
        return f'{head}:{os.readlink(name)}'
    if stat.S_ISREG(st.st_mode):
        digest = hashlib.sha256()
        with open(name, 'rb') as f:
            for chunk in iter(lambda: f.read(1 << 20), b''):
                digest.update(chunk)
        return f'{head}:{digest.hexdigest()}'
    # A directory's mode and owner only: the agent writes inside the directories the roles create.
    return head


def _run(argv: list[str]) -> tuple[int, str]:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    except (FileNotFoundError, subprocess.TimeoutExpired) as error:
        return 127, type(error).__name__
    return done.returncode, done.stdout


def _units(names: list[str]) -> dict[str, str]:
    if not names:
        return {}
    # One systemctl for every unit; the sub-state is left out (a oneshot's "exited" is its steady state).
    code, out = _run(['systemctl', 'show', '--property=Id,LoadState,UnitFileState,ActiveState', '--', *names])
    if code != 0:
        return {n: f'systemctl:{code}' for n in names}
    blocks = [dict(line.split('=', 1) for line in block.splitlines() if '=' in line) for block in out.strip().split('\n\n')]
    found = {}
    for name, block in zip(names, blocks):
        found[name] = f"{block.get('LoadState', '')}:{block.get('UnitFileState', '')}:{block.get('ActiveState', '')}"
    return found


def _packages(names: list[str]) -> dict[str, str]:
    if not names:
        return {}
    found = {n: 'absent' for n in names}
    _, out = _run(['dpkg-query', '-W', '-f=${Package}\t${db:Status-Abbrev}\t${Version}\n', '--', *names])
    for line in out.splitlines():
        parts = line.split('\t')
        if len(parts) == 3 and parts[0] in found:
            found[parts[0]] = f'{parts[1].strip()}:{parts[2]}'
    return found


def _user(name: str) -> str:
    try:
        u = pwd.getpwnam(name)
    except KeyError:
        return 'absent'
    return f'{u.pw_uid}:{u.pw_gid}:{u.pw_dir}:{u.pw_shell}'


def _group(name: str) -> str:
    try:
        return str(grp.getgrnam(name).gr_gid)
    except KeyError:
        return 'absent'


def _sysctl(name: str) -> str:
    try:
        with open('/proc/sys/' + name.replace('.', '/'), encoding='utf-8') as f:
            return ' '.join(f.read().split())
    except OSError:
        return 'absent'


def _nft(name: str) -> str:
    family, _, table = name.partition(' ')
    # Stateless (-s): counters and quotas move with traffic, the rules do not.
    code, out = _run(['nft', '-s', 'list', 'table', family, table])
    return _sha(out.encode()) if code == 0 else 'absent'


# MemTotal moves by a few kB between two boots of the same machine (what the kernel reserves), so the
# exact number made every reboot look like drift. A resize moves it by a GiB or more: memory is
# fingerprinted in MiB (the unit preflight compares with the host policy) rounded to the nearest step.
MEMORY_STEP_MIB = 64


def memory_mib(meminfo: str) -> str:
    """MemTotal of /proc/meminfo's text in MiB, to the nearest MEMORY_STEP_MIB; 'absent' without it."""
    for line in meminfo.splitlines():
        key, _, value = line.partition(':')
        if key == 'MemTotal':
            kib = int(value.split()[0])
            return str(round(kib / 1024 / MEMORY_STEP_MIB) * MEMORY_STEP_MIB)
    return 'absent'


def host_facts(os_release: bytes, machine: str, cpus: int | None, meminfo: str, root_bytes: int) -> str:
    """The host part: what preflight compares with the host policy, so a resize or a release upgrade runs it again."""
    return f'{_sha(os_release)}:{machine}:{cpus}:{memory_mib(meminfo)} MiB:{root_bytes}'


def _host(_: str) -> str:
    with open('/etc/os-release', 'rb') as f:
        release = f.read()
    with open('/proc/meminfo', encoding='utf-8') as f:
        meminfo = f.read()
    root = os.statvfs('/')
    return host_facts(release, platform.machine(), os.cpu_count(), meminfo, root.f_blocks * root.f_frsize)


def _sshd(_: str) -> str:
    # What sshd runs with: a drop-in added or edited anywhere shows here, the files the role wrote do not.
    code, out = _run(['/usr/sbin/sshd', '-T'])
    return _sha(out.encode()) if code == 0 else ('absent' if code == 127 else f'sshd:{code}')


def _tailscale(_: str) -> str:
    # Whether the host is on the tailnet (the tailscale role joins it once; nothing else records that).
    code, out = _run(['tailscale', 'status', '--json'])
    if code == 127:
        return 'absent'
    try:
        return str(json.loads(out).get('BackendState', 'unknown'))
    except (ValueError, AttributeError):
        return f'status:{code}'


READERS = {'path': _path, 'user': _user, 'group': _group, 'sysctl': _sysctl, 'nft': _nft, 'host': _host, 'tailscale': _tailscale, 'sshd': _sshd,
           'module': lambda name: 'loaded' if os.path.isdir(f'/sys/module/{name}') else 'absent'}


def fingerprint(resources: list[dict]) -> dict[str, str]:
    items: dict[str, str] = {}
    batched: dict[str, list[str]] = {'unit': [], 'package': []}
    for resource in resources:
        kind, name = str(resource.get('kind')), str(resource.get('name'))
        if kind in batched:
            batched[kind].append(name)
        elif kind in READERS:
            items[f'{kind}:{name}'] = READERS[kind](name)
        else:
            items[f'{kind}:{name}'] = 'unknown-kind'
    items.update({f'unit:{n}': v for n, v in _units(sorted(set(batched['unit']))).items()})
    items.update({f'package:{n}': v for n, v in _packages(sorted(set(batched['package']))).items()})
    return items


def _digest(items: dict[str, str]) -> str:
    return _sha(json.dumps(items, sort_keys=True).encode())


# The drift check (docs/agent.md, "Drift"): where sync leaves the list it fingerprinted, and where the
# root timer (fleetkit-drift-check.timer, the agent role) writes what it finds for the unprivileged agent.
RESOURCES_PATH = '/etc/fleetkit/fingerprint-resources.json'
STATE_PATH = '/run/fleetkit/fingerprint/state.json'


def parts(items: dict[str, str]) -> dict[str, str]:
    # One digest per kind (nft, sshd, unit, path ...), as lines "key<TAB>value" in sorted key order:
    # the gateway computes the same from the recorded items (src/gateway/drift/) to say which part moved.
    by_kind: dict[str, list[str]] = {}
    for key in sorted(items):
        by_kind.setdefault(key.split(':', 1)[0], []).append(f'{key}\t{items[key]}')
    return {kind: _sha('\n'.join(lines).encode()) for kind, lines in by_kind.items()}


def keys_digest(items: dict[str, str]) -> str:
    # Which resources were read: a list sync has not installed yet gives another answer, not drift.
    return _sha('\n'.join(sorted(items)).encode())


def _write_atomic(path: str, text: str) -> None:
    directory = os.path.dirname(path)
    os.makedirs(directory, mode=0o755, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix='.' + os.path.basename(path) + '.')
    try:
        with os.fdopen(fd, 'w', encoding='utf-8') as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def _cost(started: float) -> dict[str, int]:
    # What this check cost the host: CPU of this process and its children (systemctl, nft, sshd -T,
    # dpkg-query), blocks read from disk, bytes read through read(2) by this process, wall time.
    own, kids = getrusage(RUSAGE_SELF), getrusage(RUSAGE_CHILDREN)
    cpu = own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime
    rchar = 0
    try:
        with open('/proc/self/io', encoding='utf-8') as f:
            rchar = int(dict(line.split(': ', 1) for line in f.read().splitlines()).get('rchar', '0'))
    except (OSError, ValueError):
        pass
    return {'cpu_ms': round(cpu * 1000), 'read_blocks': own.ru_inblock + kids.ru_inblock, 'read_bytes': rchar,
            'wall_ms': round((time.monotonic() - started) * 1000)}


def snapshot(resources_path: str = RESOURCES_PATH, state_path: str = STATE_PATH) -> None:
    # Reads only; the one write is the state file under /run, 0644 (digests, never a file's content).
    started = time.monotonic()
    try:
        with open(resources_path, encoding='utf-8') as f:
            resources = json.load(f)
        items = fingerprint(resources)
        state = {'digest': _digest(items), 'keys_sha256': keys_digest(items), 'parts': parts(items)}
    except (OSError, ValueError) as error:
        # No list yet (no sync recorded a fingerprint since the role installed the timer): say so.
        state = {'error': f'{type(error).__name__}: {resources_path}'}
    state.update({'checked_at': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()), 'cost': _cost(started)})
    _write_atomic(state_path, json.dumps(state, sort_keys=True) + '\n')


def direct(resources: list[dict], install: bool = False) -> None:
    # The same answer as the module's, as one JSON line on stdout: src/sync/fingerprint-probe.ts reads it.
    # install: sync's probe after a converge leaves the list on the host for the drift check and runs it once.
    items = fingerprint(resources)
    if install:
        try:
            _write_atomic(RESOURCES_PATH, json.dumps(resources) + '\n')
            snapshot()
        except OSError as error:
            # The fingerprint still counts for sync; the agent then reports drift as unknown (no_list).
            print(f'fleetkit_fingerprint: drift check not installed: {error}', file=sys.stderr)
    print(json.dumps({'digest': _digest(items), 'items': items}))


def main() -> None:
    if sys.argv[1:2] == ['--snapshot']:
        # fleetkit-drift-check.service: python3 fleetkit_fingerprint.py --snapshot
        snapshot()
        return
    module = AnsibleModule(argument_spec={'resources': {'type': 'list', 'elements': 'dict', 'required': True}}, supports_check_mode=True)
    items = fingerprint(module.params['resources'])
    module.exit_json(changed=False, digest=_digest(items), items=items)


if __name__ == '__main__':
    main()
