"""Every process a CI check starts is ended when the check ends: passed, failed (an exception, a
`SystemExit` from a failed check) or stopped by SIGTERM or SIGINT.

Importing this module is enough. It keeps each `subprocess.Popen` made in this process (by the
check, by `subprocess.run`, by asyncio and anyio, by Selenium's chromedriver service, by the MCP
SDK's stdio client), and when the interpreter exits it sends SIGTERM to each one still running
(to its whole group when it leads one), waits a grace, then SIGKILL. `adopt(callback)` adds
something else to end first (a browser: `adopt(driver.quit)`).

`subprocess.run` (and so `check_output`) gets a deadline when it is given none
(`DEFAULT_TIMEOUT`), as do `subprocess.call` and `check_call`: no check waits for ever on a child.
(.ci/step.py still sweeps what a check killed by SIGKILL could not end.)
"""
import atexit
import functools
import os
import signal
import subprocess
import sys
import threading
import time

GRACE = 5
DEFAULT_TIMEOUT = 600

_lock = threading.Lock()
_processes = []
_callbacks = []
_original_init = subprocess.Popen.__init__
_original_run = subprocess.run
_original_call = subprocess.call
_original_check_call = subprocess.check_call


@functools.wraps(_original_init)
def _keep(self, *args, **kwargs):
    _original_init(self, *args, **kwargs)
    with _lock:
        # Those that ended are let go (poll() reaps a zombie no one waited for).
        _processes[:] = [process for process in _processes if process.poll() is None]
        _processes.append(self)


def _with_deadline(function):
    @functools.wraps(function)
    def bounded(*args, **kwargs):
        if kwargs.get("timeout") is None:
            kwargs["timeout"] = DEFAULT_TIMEOUT
        return function(*args, **kwargs)
    return bounded


subprocess.Popen.__init__ = _keep
subprocess.run = _with_deadline(_original_run)
subprocess.call = _with_deadline(_original_call)
subprocess.check_call = _with_deadline(_original_check_call)


def adopt(callback):
    """Calls `callback` when the check ends, before its processes are ended (last adopted, first)."""
    with _lock:
        _callbacks.append(callback)
    return callback


def _signal_group_or_process(process, number):
    try:
        if os.getpgid(process.pid) == process.pid:
            os.killpg(process.pid, number)
        else:
            os.kill(process.pid, number)
    except (ProcessLookupError, PermissionError):
        pass


def end_all():
    """Ends whatever is still running; called at exit, and may be called earlier."""
    # A second SIGTERM must not cut this short.
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    with _lock:
        callbacks, _callbacks[:] = list(reversed(_callbacks)), []
    for callback in callbacks:
        try:
            callback()
        except Exception:  # a browser the check already quit, say
            pass
    with _lock:
        running = [process for process in _processes if process.poll() is None]
        _processes[:] = []
    for process in running:
        _signal_group_or_process(process, signal.SIGTERM)
    deadline = time.monotonic() + GRACE
    for process in running:
        try:
            process.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
    for process in running:
        if process.poll() is None:
            print(f"owned: {process.args!r} did not end at SIGTERM; killed", file=sys.stderr)
        _signal_group_or_process(process, signal.SIGKILL)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            print(f"owned: {process.args!r} (pid {process.pid}) could not be reaped", file=sys.stderr)


def _stop(number, frame):
    # A SystemExit runs `finally` blocks and the exit handlers, which end the processes.
    raise SystemExit(128 + number)


# Before the interpreter waits for its other threads (one may be blocked on a child's pipe),
# where that hook exists; at exit in any case.
if hasattr(threading, "_register_atexit"):
    threading._register_atexit(end_all)
atexit.register(end_all)
if threading.current_thread() is threading.main_thread():
    signal.signal(signal.SIGTERM, _stop)
