# fleetkit_events: writes one JSON line per host result to $FLEETKIT_EVENTS_FILE and flushes it at
# once, so `fleetkit sync` shows progress live and a killed sync loses nothing Ansible reported.
# Enabled only by fleetkit (ANSIBLE_CALLBACKS_ENABLED=fleetkit_events); the stdout callback is untouched.
from __future__ import annotations

DOCUMENTATION = '''
name: fleetkit_events
type: notification
short_description: per-host JSON lines for fleetkit sync
description:
  - Appends one JSON object per line to the file named by FLEETKIT_EVENTS_FILE.
requirements:
  - FLEETKIT_EVENTS_FILE set in the environment
'''

import difflib
import json
import os
import time

from ansible import context
from ansible.plugins.callback import CallbackBase

# What a task manages, by module: recorded after a converge so `fleetkit sync` can fingerprint it
# (ansible/playbooks/fingerprint.yml). Keys are read from the module's own answer or its arguments.
# A file a role reads (stat, slurp) is one whose change would change what it does.
_PATH_MODULES = {'copy', 'template', 'file', 'lineinfile', 'blockinfile', 'get_url', 'stat', 'slurp'}
_UNIT_MODULES = {'systemd', 'systemd_service', 'service'}
_NAMED = {'user': 'user', 'group': 'group', 'sysctl': 'sysctl', 'modprobe': 'module'}

# What a changed task shows of its difference (check mode with --diff): at most this many lines per
# task, each at most this long, so one huge file cannot swell the events file or the report.
_DIFF_LINES = 200
_DIFF_LINE_CHARS = 500


def _text(value):
    if value is None:
        return ''
    return value if isinstance(value, str) else json.dumps(value, indent=2, sort_keys=True, default=str) + '\n'


def _unified(diff, path=None):
    """One of Ansible's diff dicts (before/after and their headers, or a `prepared` text) as diff lines."""
    if not isinstance(diff, dict):
        return []
    if isinstance(diff.get('prepared'), str):
        return diff['prepared'].splitlines()
    if 'before' not in diff and 'after' not in diff:
        return []
    before = _text(diff.get('before'))
    after = _text(diff.get('after'))
    if before == after:
        return []
    # The file's own name on both sides: a copy's after_header is the controller's temporary file,
    # and a file not there yet has no before_header.
    name = str(path or diff.get('before_header') or diff.get('after_header') or '')
    return [line.rstrip('\n') for line in difflib.unified_diff(
        before.splitlines(True), after.splitlines(True),
        fromfile=f'{name} (now)'.strip(), tofile=f'{name} (wanted)'.strip(), n=3, lineterm='')]


def _settings(value):
    """A role's structured differences (fleetkit_differences): [{setting, current, wanted}], as strings."""
    if not isinstance(value, list):
        return []
    found = []
    for d in value:
        if isinstance(d, dict) and isinstance(d.get('setting'), str):
            found.append({k: (d.get(k) if isinstance(d.get(k), str) or d.get(k) is None else json.dumps(d.get(k), default=str))
                          for k in ('setting', 'current', 'wanted')})
    return found


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = 'notification'
    CALLBACK_NAME = 'fleetkit_events'
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self):
        super().__init__()
        path = os.environ.get('FLEETKIT_EVENTS_FILE')
        self._out = open(path, 'a', encoding='utf-8') if path else None

    def _emit(self, event, **fields):
        if self._out is None:
            return
        fields['event'] = event
        fields['at'] = round(time.time(), 3)
        self._out.write(json.dumps(fields, default=str) + '\n')
        self._out.flush()

    @staticmethod
    def _role(task):
        role = getattr(task, '_role', None)
        return role.get_name() if role is not None else None

    @staticmethod
    def _message(result):
        # Only the message: a result may hold module arguments, and those may hold secrets.
        res = result._result
        msg = res.get('msg') or res.get('stderr') or res.get('reason') or ''
        if not isinstance(msg, str):
            msg = json.dumps(msg, default=str)
        return msg[:1500]

    @staticmethod
    def _managed(action, res):
        args = (res.get('invocation') or {}).get('module_args') or {}
        if action in _PATH_MODULES:
            path = res.get('dest') or args.get('dest') or args.get('path') or args.get('src') or res.get('path')
            return [{'kind': 'path', 'name': path}] if isinstance(path, str) else []
        if action == 'apt_repository':
            # The list file the module writes for a named repository.
            filename = args.get('filename')
            return [{'kind': 'path', 'name': f'/etc/apt/sources.list.d/{filename}.list'}] if isinstance(filename, str) else []
        name = res.get('name') or args.get('name')
        if action in _UNIT_MODULES:
            return [{'kind': 'unit', 'name': name}] if isinstance(name, str) else []
        if action in ('apt', 'package'):
            names = args.get('name') or args.get('pkg') or []
            names = [names] if isinstance(names, str) else names
            # Only plain package names: a version pin or a .deb path is not a name dpkg-query knows.
            return [{'kind': 'package', 'name': n} for n in names if isinstance(n, str) and n.replace('-', '').replace('.', '').replace('+', '').isalnum()]
        if action in _NAMED:
            found = [{'kind': _NAMED[action], 'name': name}] if isinstance(name, str) else []
            if action == 'sysctl' and isinstance(args.get('sysctl_file'), str):
                found.append({'kind': 'path', 'name': args['sysctl_file']})
            return found
        return []

    def _resources(self, result):
        action = (result._task.action or '').rsplit('.', 1)[-1]
        res = result._result
        found = []
        for item in (res.get('results') if isinstance(res.get('results'), list) else [res]):
            if isinstance(item, dict) and not item.get('skipped'):
                found.extend(self._managed(action, item))
        return found

    def _result(self, event, result, **extra):
        task = result._task
        self._emit(event, host=result._host.get_name(), task=task.get_name(), role=self._role(task),
                   changed=bool(result._result.get('changed', False)), **extra)

    def v2_playbook_on_task_start(self, task, is_conditional):
        self._emit('task_start', task=task.get_name(), role=self._role(task))

    @staticmethod
    def _difference(result):
        """
        What a changed task would change (check mode with --diff): Ansible's own diff of a file or
        template, a role's own before and after (a task's `fleetkit_diff`) and its structured
        differences (a task's `fleetkit_differences`: the setting, its value now and the one wanted). Never the values of a no_log task, nor of a task the role
        keeps out of diffs with `diff: false` (a file that holds a secret): only that it changed.
        """
        if not context.CLIARGS.get('diff'):
            return None
        task = result._task
        res = result._result
        if task.no_log or res.get('censored') or task.diff is False:
            return {'hidden': True, 'lines': [], 'truncated': False}
        items = res.get('results') if isinstance(res.get('results'), list) else [res]
        lines = []
        settings = []
        for item in items:
            if not isinstance(item, dict) or item.get('skipped'):
                continue
            if item is not res and (item.get('_ansible_no_log') or item.get('censored')):
                return {'hidden': True, 'lines': [], 'truncated': False}
            diffs = item.get('diff')
            args = (item.get('invocation') or {}).get('module_args') or {}
            path = item.get('dest') or args.get('dest') or item.get('path') or args.get('path')
            for d in (diffs if isinstance(diffs, list) else [diffs]):
                lines.extend(_unified(d, path if isinstance(path, str) else None))
            # A role's own before/after (a debug task's fleetkit_diff): the firewall's live table against its candidate.
            lines.extend(_unified(item.get('fleetkit_diff')))
            settings.extend(_settings(item.get('fleetkit_differences')))
        if not lines and not settings:
            return None
        found = {'hidden': False, 'lines': [line[:_DIFF_LINE_CHARS] for line in lines[:_DIFF_LINES]],
                 'truncated': len(lines) > _DIFF_LINES}
        if settings:
            found['settings'] = settings
        return found

    def v2_runner_on_ok(self, result):
        extra = {}
        if result._result.get('changed', False):
            difference = self._difference(result)
            if difference is not None:
                extra['diff'] = difference
        resources = self._resources(result)
        if resources:
            extra['resources'] = resources
        res = result._result
        if (result._task.action or '').endswith('fleetkit_fingerprint') and isinstance(res.get('items'), dict):
            extra['fingerprint'] = {'digest': res.get('digest'), 'items': res['items']}
        self._result('ok', result, **extra)

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._result('failed', result, ignored=bool(ignore_errors), msg=self._message(result))

    def v2_runner_on_unreachable(self, result):
        self._result('unreachable', result, msg=self._message(result))

    def v2_runner_on_skipped(self, result):
        self._result('skipped', result)

    def v2_playbook_on_stats(self, stats):
        hosts = {}
        for host in sorted(stats.processed.keys()):
            hosts[host] = stats.summarize(host)
        self._emit('stats', hosts=hosts)
        if self._out is not None:
            self._out.close()
            self._out = None
