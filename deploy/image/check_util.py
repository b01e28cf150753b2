"""check_util: what the image check's modules share: its error, its output
and running a command."""

import subprocess
import sys
import time


class CheckError(Exception):
    """A check failed; the message says what was expected and what was seen."""


def say(text):
    print(text, flush=True)


def run(argv, check=True, env=None, timeout=None):
    """Runs argv; returns its stdout. A non-zero exit raises CheckError with
    the command and its output when check is set."""
    result = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                            env=env, timeout=timeout)
    if check and result.returncode != 0:
        raise CheckError(f"{' '.join(argv)} exited {result.returncode}:\n"
                         f"{result.stdout[-3000:]}{result.stderr[-3000:]}")
    return result.stdout


def wait_for(what, predicate, timeout, interval=0.2):
    """Polls predicate until it returns a true value (returned), or raises
    CheckError after timeout seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise CheckError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)
