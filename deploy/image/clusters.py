"""clusters: the API server the checked containers talk to, and the check's
own client for it.

LocalApiserver (here): build/cmd/local-apiserver over TLS with a bearer
token; its certificate also names the address the containers dial
(slirp4netns's gateway to the host's loopback), as kube-apiserver's names
its service IP. KubeconfigCluster (GitHub): an existing cluster (kind), the
check acting with the kubeconfig's credentials and the containers with a
token of the Deployment's service account (TokenRequest), as a kubelet
mounts one. Both count status writes by kube-apiserver's
apiserver_request_total.
"""

import base64
import json
import os
import re
import secrets
import ssl
import subprocess
import tempfile
import urllib.error
import urllib.request

import yaml

from check_util import CheckError, wait_for


class ApiClient:
    """JSON over HTTPS to a Kubernetes API server. Thread-compatible."""

    def __init__(self, server, ca_pem, token=None, client_cert=None):
        self.server, self.token = server.rstrip("/"), token
        self.context = ssl.create_default_context(cadata=ca_pem)
        if client_cert:
            self.context.load_cert_chain(*client_cert)

    def request(self, method, path, body=None, accept="application/json"):
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": "application/json", "Accept": accept}
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        request = urllib.request.Request(self.server + path, data=data, method=method,
                                         headers=headers)
        try:
            with urllib.request.urlopen(request, context=self.context, timeout=10) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def call(self, method, path, body=None, ok=(200, 201)):
        code, text = self.request(method, path, body)
        if code not in ok:
            raise CheckError(f"{method} {path}: {code} {text[:500]}")
        return json.loads(text) if text else {}

    def status_writes(self):
        """Status writes of routes counted by the server's
        apiserver_request_total: {"ok": 2xx, "conflict": 409, "other": ...}."""
        code, text = self.request("GET", "/metrics", accept="text/plain")
        if code != 200:
            raise CheckError(f"GET {self.server}/metrics: {code} {text[:300]}")
        counts = {"ok": 0.0, "conflict": 0.0, "other": 0.0}
        for labels, value in prometheus_samples(text, "apiserver_request_total"):
            if (labels.get("resource") == "routes" and labels.get("subresource") == "status"
                    and labels.get("verb") in ("PUT", "PATCH", "APPLY")):
                code = labels.get("code", "")
                key = "ok" if code.startswith("2") else "conflict" if code == "409" else "other"
                counts[key] += value
        return counts

    def ensure_namespace(self, name):
        self.call("POST", "/api/v1/namespaces",
                  {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}},
                  ok=(201, 409))


def prometheus_samples(text, name):
    """(labels, value) of each sample of metric name in Prometheus text."""
    pattern = re.compile(r'^' + re.escape(name) + r'(?:\{(.*)\})?\s+(\S+)', re.M)
    for m in pattern.finditer(text):
        labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(1) or ""))
        yield labels, float(m.group(2))


class LocalApiserver:
    """local-apiserver on 127.0.0.1 (a port picked at run time) over TLS."""

    # slirp4netns's address for the host's loopback, from inside a container.
    HOST_LOOPBACK_FROM_CONTAINER = "10.0.2.2"

    def __init__(self, binary, log_dir):
        self.binary, self.log_dir = binary, log_dir
        self.process = None

    def describe(self):
        return (f"local-apiserver --tls --token (a random one) on {self.server}; containers dial "
                f"{self.service_host}:{self.service_port} through slirp4netns")

    def start(self):
        token = secrets.token_hex(20)
        kubeconfig = os.path.join(self.log_dir, "local-apiserver.kubeconfig")
        log_path = os.path.join(self.log_dir, "local-apiserver.log")
        self.log = open(log_path, "w")
        self.process = subprocess.Popen(
            [self.binary, "--listen", "127.0.0.1:0", "--tls",
             "--tls-host", self.HOST_LOOPBACK_FROM_CONTAINER, "--token", token,
             "--kubeconfig-out", kubeconfig],
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT)

        def url():
            if self.process.poll() is not None:
                raise CheckError(f"local-apiserver exited {self.process.returncode}: "
                                 + open(log_path).read()[-2000:])
            return re.search(r"^https://\S+", open(log_path).read(), re.M)
        self.server = wait_for("local-apiserver to print its URL", url, 30).group(0)
        ca_data = re.search(r"certificate-authority-data: (\S+)", open(kubeconfig).read())
        self.ca_pem = base64.b64decode(ca_data.group(1)).decode()
        self.admin = ApiClient(self.server, self.ca_pem, token=token)
        self.sa_token = token  # local-apiserver knows one token
        self.service_host = self.HOST_LOOPBACK_FROM_CONTAINER
        self.service_port = self.server.rsplit(":", 1)[1]
        self.network_flags = ["--network=slirp4netns:allow_host_loopback=true"]

    def prepare(self, namespace, service_account):
        """What `kubectl apply -k deploy/controller` would have made that the
        controller needs: its namespace (local-apiserver has no RBAC)."""
        self.admin.ensure_namespace(namespace)

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()


class KubeconfigCluster:
    """A running cluster (kind) named by a kubeconfig, with deploy/controller
    applied (the service account and its RBAC)."""

    def __init__(self, kubeconfig, service_host, service_port, network, log_dir):
        self.kubeconfig, self.log_dir = kubeconfig, log_dir
        self.service_host, self.service_port = service_host, str(service_port)
        self.network_flags = [f"--network={network}"] if network else []

    def describe(self):
        return (f"the cluster of {self.kubeconfig} ({self.server}); containers dial "
                f"{self.service_host}:{self.service_port}")

    def start(self):
        config = yaml.safe_load(open(self.kubeconfig))
        context_name = config.get("current-context")
        context = next(c["context"] for c in config["contexts"] if c["name"] == context_name)
        cluster = next(c["cluster"] for c in config["clusters"] if c["name"] == context["cluster"])
        user = next(u["user"] for u in config["users"] if u["name"] == context["user"])
        self.server = cluster["server"]
        if "certificate-authority-data" in cluster:
            self.ca_pem = base64.b64decode(cluster["certificate-authority-data"]).decode()
        else:
            self.ca_pem = open(cluster["certificate-authority"]).read()
        client_cert = None
        if "client-certificate-data" in user:
            files = []
            for key in ("client-certificate-data", "client-key-data"):
                f = tempfile.NamedTemporaryFile("w", dir=self.log_dir, delete=False)
                f.write(base64.b64decode(user[key]).decode())
                f.close()
                files.append(f.name)
            client_cert = tuple(files)
        self.admin = ApiClient(self.server, self.ca_pem, token=user.get("token"),
                               client_cert=client_cert)

    def prepare(self, namespace, service_account):
        """A token of the Deployment's service account, as the kubelet
        requests one for the pod (TokenRequest, an hour)."""
        answer = self.admin.call(
            "POST", f"/api/v1/namespaces/{namespace}/serviceaccounts/{service_account}/token",
            {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
             "spec": {"expirationSeconds": 3600}})
        self.sa_token = answer["status"]["token"]

    def stop(self):
        pass
