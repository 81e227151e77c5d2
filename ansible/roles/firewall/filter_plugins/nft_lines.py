# fleetkit_nft_lines: an nft ruleset as the lines that decide it, for check mode to diff the live
# `inet fleetkit` table (as `nft list table` prints it) against the role's candidate file: no
# indentation, comments, blank lines, nor the candidate's create-and-delete preamble. What nft
# rewrites as it loads a rule is written its way on both sides, so equal rules make no diff lines:
# the protocol match an ICMP type implies is dropped, and the elements of a `{ ... }` set sorted.
from __future__ import annotations

import re

_PREAMBLE = {'table inet fleetkit {}', 'delete table inet fleetkit'}
_IMPLIED = re.compile(r'\bmeta l4proto (?:icmp|ipv6-icmp) (?=icmp(?:v6)? type\b)')
_SET = re.compile(r'\{ ([^{}]*) \}')


def _normal(line: str) -> str:
    line = _IMPLIED.sub('', line)
    return _SET.sub(lambda m: '{ ' + ', '.join(sorted(e.strip() for e in m.group(1).split(','))) + ' }', line)


def fleetkit_nft_lines(ruleset: str) -> str:
    kept = []
    for line in (ruleset or '').splitlines():
        line = line.strip()
        if not line or line.startswith('#') or line in _PREAMBLE:
            continue
        kept.append(_normal(line))
    return ''.join(f'{line}\n' for line in kept)


class FilterModule:
    def filters(self):
        return {'fleetkit_nft_lines': fleetkit_nft_lines}
