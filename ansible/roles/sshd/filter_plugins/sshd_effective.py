# fleetkit_sshd_differences: what `sshd -T` says sshd runs with, against what the sshd role wants.
# A difference means a hand edit, or another drop-in read before ours (sshd keeps the first value
# of most settings; every Port line anywhere adds a listener).
# fleetkit_sshd_setting_differences: the same, structured ({setting, current, wanted}), for check
# mode to show each setting with both values (the fleetkit_events callback carries them to drift).
from __future__ import annotations

# How sshd_config spells the settings the role owns (`sshd -T` prints them in lower case).
_SPELLING = {
    'port': 'Port',
    'passwordauthentication': 'PasswordAuthentication',
    'kbdinteractiveauthentication': 'KbdInteractiveAuthentication',
    'pubkeyauthentication': 'PubkeyAuthentication',
    'permitrootlogin': 'PermitRootLogin',
}


def _effective(sshd_t_output: str) -> dict[str, list[str]]:
    seen: dict[str, list[str]] = {}
    for line in sshd_t_output.splitlines():
        key, _, value = line.strip().partition(' ')
        if key:
            seen.setdefault(key.lower(), []).append(value.strip())
    return seen


def _compare(sshd_t_output: str, expected: dict) -> list[tuple[str, str, list[str], list[str], bool]]:
    """(key, sshd_config's name, values now, values wanted, whether the setting is a list) of each that differs."""
    seen = _effective(sshd_t_output)
    found = []
    for key, want in expected.items():
        have = seen.get(key, [])
        name = _SPELLING.get(key, key)
        if isinstance(want, list):
            wanted = [str(w) for w in want]
            if sorted(have) != sorted(wanted):
                found.append((key, name, have, wanted, True))
        elif have[:1] != [str(want)]:
            found.append((key, name, have[:1], [str(want)], False))
    return found


def fleetkit_sshd_setting_differences(sshd_t_output: str, expected: dict) -> list[dict]:
    """Each setting sshd runs with otherwise than EXPECTED: its name, its value now (None when unset) and the one wanted."""
    return [{'setting': name, 'current': ', '.join(have) or None, 'wanted': ', '.join(wanted)}
            for _, name, have, wanted, _ in _compare(sshd_t_output, expected)]


def fleetkit_sshd_differences(sshd_t_output: str, expected: dict) -> list[str]:
    found = []
    for key, _, have, wanted, listed in _compare(sshd_t_output, expected):
        if listed:
            found.append(f"sshd listens on {key} {', '.join(have) or 'none'}, not {', '.join(wanted)}")
        else:
            found.append(f"sshd runs with {key} {have[0] if have else '(unset)'}, not {wanted[0]}")
    return found


class FilterModule:
    def filters(self):
        return {
            'fleetkit_sshd_differences': fleetkit_sshd_differences,
            'fleetkit_sshd_setting_differences': fleetkit_sshd_setting_differences,
        }
