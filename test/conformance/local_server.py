"""A local-apiserver process for the client conformance suite.

Starts build/cmd/local-apiserver with TLS and a bearer token (what clients
meet on a real cluster), waits for the URL it prints, and stops it. Also
reads its /metrics and calls its admin endpoints through the official
Python client's own HTTP stack.
"""

import os
import re
import signal
import subprocess
import tempfile

from kubernetes import client, config


class LocalApiServer:
    """One local-apiserver process and a kubeconfig pointing at it."""

    def __init__(self, binary):
        self.dir = tempfile.mkdtemp(prefix="routestatus-conformance-")
        self.kubeconfig = os.path.join(self.dir, "kubeconfig")
        self.log_path = os.path.join(self.dir, "local-apiserver.log")
        self._log = open(self.log_path, "w")
        self._proc = subprocess.Popen(
            [binary, "--listen", "127.0.0.1:0", "--tls", "--token", "conformance-token",
             "--kubeconfig-out", self.kubeconfig],
            stdout=subprocess.PIPE, stderr=self._log, text=True)
        self.url = self._proc.stdout.readline().strip()
        if not self.url.startswith("https://127.0.0.1:"):
            self.stop()
            raise RuntimeError("local-apiserver did not print its URL; log: " + self.log())
        config.load_kube_config(config_file=self.kubeconfig)
        self.api_client = client.ApiClient()

    def log(self):
        with open(self.log_path) as f:
            return f.read()

    def stop(self):
        if self._proc.poll() is None:
            self._proc.send_signal(signal.SIGTERM)
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
        self._log.close()

    def raw(self, method, path, query=None, body=None):
        """A request through the Python client's REST layer (TLS, token): its
        urllib3 response, whatever the status."""
        return self.api_client.call_api(
            path, method, query_params=query or [], body=body,
            header_params={"Accept": "application/json", "Content-Type": "application/json"},
            auth_settings=["BearerToken"], _preload_content=False,
            _return_http_data_only=True)

    def compact(self):
        """Forgets the event history: older watches and continues get 410."""
        self.raw("POST", "/admin/compact").read()

    def request_counts(self):
        """apiserver_request_total as {frozenset(labels): value}."""
        text = self.raw("GET", "/metrics").data.decode()
        counts = {}
        for line in text.splitlines():
            m = re.match(r'apiserver_request_total\{(.*)\} (\S+)$', line)
            if m:
                labels = frozenset(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
                counts[labels] = float(m.group(2))
        return counts

    def count(self, **labels):
        """Sum of apiserver_request_total over series carrying `labels`."""
        want = set(labels.items())
        return sum(v for k, v in self.request_counts().items() if want <= k)
