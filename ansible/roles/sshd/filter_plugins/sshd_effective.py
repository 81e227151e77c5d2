# fleetkit_sshd_differences: what `sshd -T` says sshd runs with, against what the sshd role wants.
# A difference means a hand edit, or another drop-in read before ours (sshd keeps the first value
# of most settings; every Port line anywhere adds a listener).
from __future__ import annotations


def fleetkit_sshd_differences(sshd_t_output: str, expected: dict) -> list[str]:
    seen: dict[str, list[str]] = {}
    for line in sshd_t_output.splitlines():
        key, _, value = line.strip().partition(' ')
        if key:
            seen.setdefault(key.lower(), []).append(value.strip())
    found = []
    for key, want in expected.items():
        have = seen.get(key, [])
        if isinstance(want, list):
            if sorted(have) != sorted(str(w) for w in want):
                found.append(f"sshd listens on {key} {', '.join(have) or 'none'}, not {', '.join(str(w) for w in want)}")
        elif have[:1] != [str(want)]:
            found.append(f"sshd runs with {key} {have[0] if have else '(unset)'}, not {want}")
    return found


class FilterModule:
    def filters(self):
        return {'fleetkit_sshd_differences': fleetkit_sshd_differences}
