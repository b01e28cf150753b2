"""probes: a kubelet's httpGet liveness and readiness probes, run from the
host against a container's published port while the check runs."""

import threading
import time
import urllib.error
import urllib.request
from collections import Counter


def probe_once(url, timeout_s):
    """(answer, seconds): answer is the HTTP code, or the error's name when
    none came within timeout_s. Redirects are followed, as by the kubelet."""
    started = time.monotonic()
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as response:
            return response.status, time.monotonic() - started
    except urllib.error.HTTPError as e:
        return e.code, time.monotonic() - started
    except (urllib.error.URLError, OSError) as e:
        reason = getattr(e, "reason", e)
        return type(reason).__name__, time.monotonic() - started


def succeeded(answer):
    return isinstance(answer, int) and 200 <= answer < 400


class ProbeAnswers:
    """The answers one probe got, judged as the kubelet judges them.
    Thread-safe."""

    def __init__(self, probe):
        self.probe = probe
        self.answers = []  # (seconds since the container started, answer, latency)
        self.lock = threading.Lock()

    def add(self, at, answer, latency):
        with self.lock:
            self.answers.append((at, answer, latency))

    def snapshot(self):
        with self.lock:
            return list(self.answers)

    def first_success(self):
        """Seconds from the start to the first success_threshold successes in
        a row (ready / live), or None."""
        streak = 0
        for at, answer, _ in self.snapshot():
            streak = streak + 1 if succeeded(answer) else 0
            if streak >= self.probe.success_threshold:
                return at
        return None

    def longest_failure_streak(self, after=0.0):
        """The most consecutive failed answers at or after `after` seconds
        (the kubelet restarts or unreadies at failure_threshold)."""
        longest = streak = 0
        for at, answer, _ in self.snapshot():
            if at < after:
                continue
            streak = 0 if succeeded(answer) else streak + 1
            longest = max(longest, streak)
        return longest

    def summary(self):
        answers = self.snapshot()
        counts = Counter(str(a) for _, a, _ in answers)
        slowest = max((latency for _, _, latency in answers), default=0.0)
        return (f"{self.probe.kind} GET :{self.probe.port}{self.probe.path} every "
                f"{self.probe.period_s:g} s (timeout {self.probe.timeout_s:g} s): "
                + ", ".join(f"{n}x {a}" for a, n in sorted(counts.items()))
                + f"; slowest {slowest * 1000:.0f} ms")


class Prober(ProbeAnswers):
    """Runs one probe on its period (after its initial delay) in a thread of
    its own, as the kubelet does, from `started` (time.monotonic())."""

    def __init__(self, probe, url, started):
        super().__init__(probe)
        self.url, self.started = url, started
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self.loop, daemon=True)
        self.thread.start()

    def loop(self):
        next_at = self.started + self.probe.initial_delay_s
        while not self.stopping.wait(max(0.0, next_at - time.monotonic())):
            answer, latency = probe_once(self.url, self.probe.timeout_s)
            self.add(time.monotonic() - self.started, answer, latency)
            next_at += self.probe.period_s

    def stop(self):
        self.stopping.set()
        self.thread.join()
