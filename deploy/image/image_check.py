#!/usr/bin/python3
"""image_check: the container image proven without a container engine.

Builds the Dockerfile's stages in chroots (dockerfile_build.py: mmdebstrap
roots, overlayfs layers, an engine's build cache), then checks the final
(runtime) stage the way deploy/controller/ runs it: the root read-only, /tmp
a tmpfs, the service account token and CA where the kubelet mounts them, a
network namespace of its own, the image's USER with no new privileges. There
it runs `ldd` on the ENTRYPOINT (a library that does not resolve fails the
check, naming it and the build-stage package that has it), `--help`, and the
controller with the Deployment's args and env against `local-apiserver` (TLS,
token, in-cluster config) on loopback: it must admit two routes, serve
/metrics, /healthz and /readyz, and exit 0 on SIGTERM within the grace period.

Needs root, mmdebstrap and python3-yaml; normally run as `make image-check`.
Everything it mounts lives in a mount namespace of its own and goes away with
the process.
"""

import argparse
import base64
import fcntl
import json
import os
import re
import signal
import socket
import ssl
import struct
import subprocess
import sys
import shutil
import time
import urllib.error
import urllib.request

import yaml

sys.dont_write_bytecode = True  # Why: no __pycache__ in the build context
from dockerfile_build import (CLONE_NEWNET, CLONE_NEWNS, DEFAULT_PATH, Builder, CheckError,
                              enter, in_root, mount, mount_overlay, mount_system,
                              parse_dockerfile, resolve_user, run, say, unshare)


# ---------------------------------------------------------------- runtime checks

def loopback_up():
    SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        request = struct.pack("16sH22x", b"lo", 0)
        flags = struct.unpack("16sH22x", fcntl.ioctl(s, SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack("16sH22x", b"lo", flags | IFF_UP))


def wait_for(what, predicate, timeout, interval=0.2):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise CheckError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


def package_of(root, soname):
    """(path, package) of a library file named soname in a root, from dpkg's
    file lists; (None, None) when no package has it."""
    info = in_root(root, "/var/lib/dpkg/info")
    for name in sorted(os.listdir(info)):
        if not name.endswith(".list"):
            continue
        with open(os.path.join(info, name)) as f:
            for line in f:
                line = line.rstrip("\n")
                if line.endswith("/" + soname):
                    return line, name[:-len(".list")].split(":")[0]
    return None, None


def controller_spec(deployment_path):
    """Container args and env of the controller Deployment."""
    with open(deployment_path) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    for doc in docs:
        if doc.get("kind") == "Deployment":
            spec = doc["spec"]["template"]["spec"]
            container = spec["containers"][0]
            env = {e["name"]: e["value"] for e in container.get("env", []) if "value" in e}
            security = spec.get("securityContext", {})
            grace = spec.get("terminationGracePeriodSeconds", 30)
            return container.get("args", []), env, security, grace
    raise CheckError(f"{deployment_path}: no Deployment")


class ApiClient:
    def __init__(self, server, token, ca_pem):
        self.server, self.token = server, token
        self.context = ssl.create_default_context(cadata=ca_pem)

    def call(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.server + path, data=data, method=method, headers={
            "Authorization": "Bearer " + self.token, "Content-Type": "application/json",
            "Accept": "application/json"})
        with urllib.request.urlopen(request, context=self.context, timeout=10) as response:
            return json.loads(response.read())


def http_get(url):
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
    except OSError:
        return None, ""


def metric_value(text, name, labels):
    for line in text.splitlines():
        if line.startswith(name + "{") and all(f'{k}="{v}"' in line for k, v in labels.items()):
            return float(line.rsplit(" ", 1)[1])
    return None


class RuntimeCheck:
    def __init__(self, args, builder, build_stage, final):
        self.args = args
        self.builder = builder
        self.build_stage = build_stage
        self.final = final
        self.work = builder.work
        self.root = os.path.join(builder.mnt, "runtime")
        self.build_root = os.path.join(builder.mnt, "build-stage")
        self.processes = []
        # Logs and the kubeconfig of the last run, kept for a look.
        self.tmp = os.path.join(self.work, "last-run")
        shutil.rmtree(self.tmp, ignore_errors=True)
        os.makedirs(self.tmp)

    def ok(self, text):
        say(f"  ok  {text}")

    def start(self, argv, name, **kwargs):
        log = open(os.path.join(self.tmp, name + ".log"), "w+")
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log,
                                   stderr=subprocess.STDOUT, **kwargs)
        process.log = log
        self.processes.append(process)
        return process

    def log_of(self, process):
        process.log.flush()
        with open(process.log.name) as f:
            return f.read()

    def stop_all(self):
        for p in self.processes:
            if p.poll() is None:
                p.kill()
                p.wait()

    def check(self):
        say("image-check: the runtime image, as USER "
            f"{self.final.user}, read-only root, /tmp on tmpfs, network namespace of its own")
        unshare(CLONE_NEWNET)
        loopback_up()
        mount_overlay(self.root, self.final.layers)
        mount_overlay(self.build_root, self.build_stage.layers)
        mount_system(self.root, resolv=False)
        mount("-t", "tmpfs", "-o", "mode=1777,nosuid,nodev,size=16m", "tmpfs",
              in_root(self.root, "/tmp"))
        try:
            self.checks()
        finally:
            self.stop_all()

    def as_user(self):
        uid, gid = resolve_user(self.root, self.final.user)
        return uid, gid

    def in_image(self, argv, **kwargs):
        uid, gid = self.as_user()
        env = {"PATH": DEFAULT_PATH, "HOSTNAME": "image-check", "HOME": "/"}
        env.update(self.final.env)
        env.update(kwargs.pop("env", {}))
        return dict(env=env, preexec_fn=enter(self.root, "/", uid, gid, no_new_privs=True),
                    **kwargs), argv

    def checks(self):
        if not self.final.entrypoint:
            raise CheckError("the final stage has no ENTRYPOINT")
        binary = self.final.entrypoint[0]
        uid, gid = self.as_user()
        if uid == 0:
            raise CheckError(f"the image runs as root (USER {self.final.user})")
        lists = [c for c in self.final.copied if c.endswith("-packages.txt")]
        if self.args.runtime_packages not in lists:
            raise CheckError(f"the final stage does not COPY {self.args.runtime_packages} "
                             f"(its COPY sources: {self.final.copied}): the Dockerfile and "
                             "this check must install the runtime packages from that one list")
        host_binary = in_root(self.root, binary)
        sections = run(["readelf", "--section-headers", "--wide", host_binary])
        if ".symtab" in sections:
            raise CheckError(f"{binary} is not stripped")
        self.ok(f"USER {self.final.user} (uid {uid}, gid {gid}); ENTRYPOINT {binary} is there, "
                f"stripped, {os.path.getsize(host_binary) / 1e6:.1f} MB")
        dev_packages = [p for p in run(["dpkg-query", f"--admindir={in_root(self.root, '/var/lib/dpkg')}",
                                        "-W", "-f", "${Package}\n"]).split()
                        if p.endswith("-dev") or p in ("g++", "cmake", "make", "gcc")]
        if dev_packages:
            raise CheckError(f"the runtime image has build packages: {' '.join(dev_packages)}")

        kw, argv = self.in_image(["ldd", binary])
        result = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, **kw)
        missing = re.findall(r"^\s*(\S+) => not found", result.stdout, re.M)
        if missing:
            lines = []
            for soname in missing:
                path, package = package_of(self.build_root, soname)
                where = (f"in the build stage: {path} from package {package}" if package
                         else "not in the build stage either")
                lines.append(f"    {soname}: not found ({where})")
            packages = sorted({package_of(self.build_root, s)[1] for s in missing} - {None})
            raise CheckError(
                f"{binary} needs shared libraries the runtime image does not have:\n"
                + "\n".join(lines)
                + (f"\n  add {' '.join(packages)} to {self.args.runtime_packages}" if packages else "")
                + f"\n  ldd {binary} (uid {uid}, runtime root):\n"
                + "".join("    " + l.strip() + "\n" for l in result.stdout.splitlines()))
        if result.returncode != 0:
            raise CheckError(f"ldd {binary} exited {result.returncode}: {result.stdout}{result.stderr}")
        self.ok(f"ldd as uid {uid}: {len(result.stdout.splitlines())} entries, none \"not found\"")

        kw, argv = self.in_image(self.final.entrypoint + ["--help"])
        result = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                timeout=30, **kw)
        if result.returncode != 0 or "Usage:" not in result.stdout + result.stderr:
            raise CheckError(f"{binary} --help exited {result.returncode}:\n{result.stdout}{result.stderr}")
        self.ok("--help: exit 0, usage printed")

        self.against_apiserver(binary, uid, gid)

    def against_apiserver(self, binary, uid, gid):
        token = base64.b32encode(os.urandom(20)).decode().lower()
        kubeconfig = os.path.join(self.tmp, "kubeconfig")
        apiserver = self.start([self.args.apiserver, "--listen", "127.0.0.1:0", "--tls",
                                f"--token={token}", "--kubeconfig-out", kubeconfig], "local-apiserver")
        url = wait_for("local-apiserver to print its URL", lambda: (
            apiserver.poll() is None or self.fail_process(apiserver, "local-apiserver"))
            and re.search(r"^https://\S+", self.log_of(apiserver), re.M), 30)
        server = url.group(0)
        ca_data = re.search(r"certificate-authority-data: (\S+)", open(kubeconfig).read()).group(1)
        ca_pem = base64.b64decode(ca_data).decode()
        api = ApiClient(server, token, ca_pem)
        port = server.rsplit(":", 1)[1]

        # The service account as the kubelet mounts it (read-only).
        run_dir = in_root(self.root, "/run")
        mount("-t", "tmpfs", "-o", "mode=755,nosuid,nodev", "tmpfs", run_dir)
        sa = in_root(self.root, "/var/run/secrets/kubernetes.io/serviceaccount")
        os.makedirs(sa)
        for name, text in (("token", token), ("ca.crt", ca_pem), ("namespace", "routestatus-system")):
            with open(os.path.join(sa, name), "w") as f:
                f.write(text)
        mount("-o", "remount,ro", run_dir)

        args, env, security, grace = controller_spec(self.args.deployment)
        if security.get("runAsUser") not in (None, uid) or security.get("runAsGroup") not in (None, gid):
            raise CheckError(f"{self.args.deployment} runs as {security.get('runAsUser')}:"
                             f"{security.get('runAsGroup')}, the image as {uid}:{gid}")
        metrics_port = re.search(r"--metrics-address=\S*:(\d+)", " ".join(args))
        metrics_port = metrics_port.group(1) if metrics_port else "1936"
        router = env.get("ROUTER_SERVICE_NAME", "default")
        api.call("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                "metadata": {"name": "smoke"}})
        routes = {"web": "web.smoke.apps.example.com", "hostless": None}
        for name, host in routes.items():
            spec = {"to": {"kind": "Service", "name": name}}
            if host:
                spec["host"] = host
            api.call("POST", "/apis/route.openshift.io/v1/namespaces/smoke/routes", {
                "apiVersion": "route.openshift.io/v1", "kind": "Route",
                "metadata": {"name": name}, "spec": spec})
        template = env.get("ROUTER_SUBDOMAIN", "")
        routes["hostless"] = template.replace("${name}", "hostless").replace("${namespace}", "smoke")

        started = time.monotonic()
        kw, argv = self.in_image(self.final.entrypoint + args, env={
            **env, "KUBERNETES_SERVICE_HOST": "127.0.0.1", "KUBERNETES_SERVICE_PORT": port})
        controller = self.start(argv, "controller", **kw)

        def entry(name):
            if controller.poll() is not None:
                self.fail_process(controller, "the controller")
            route = api.call("GET", f"/apis/route.openshift.io/v1/namespaces/smoke/routes/{name}")
            for ingress in route.get("status", {}).get("ingress", []):
                if ingress.get("routerName") == router:
                    return ingress
            return None

        for name, host in routes.items():
            ingress = wait_for(f"route smoke/{name} to get a {router} entry", lambda: entry(name), 60)
            admitted = [c for c in ingress.get("conditions", []) if c.get("type") == "Admitted"]
            if not admitted or admitted[0].get("status") != "True" or ingress.get("host") != host:
                raise CheckError(f"route smoke/{name}: expected Admitted=True with host {host}, "
                                 f"got {json.dumps(ingress)}")
            self.ok(f"route smoke/{name} admitted by router {router}: host {host} "
                    f"({time.monotonic() - started:.1f} s after the start)")

        with open(f"/proc/{controller.pid}/status") as f:
            ids = {l.split(":")[0]: l.split()[1:] for l in f if l.startswith(("Uid:", "Gid:"))}
        if ids["Uid"] != [str(uid)] * 4 or ids["Gid"] != [str(gid)] * 4:
            raise CheckError(f"the controller runs as uid {ids['Uid']} gid {ids['Gid']}")

        base = f"http://127.0.0.1:{metrics_port}"
        code, text = http_get(base + "/metrics")
        writes = metric_value(text, "routestatus_status_writes_total", {"result": "success"})
        if code != 200 or writes is None or writes < len(routes):
            raise CheckError(f"GET {base}/metrics: code {code}, "
                             f"routestatus_status_writes_total{{result=\"success\"}} = {writes}")
        codes = {p: http_get(base + p)[0] for p in ("/healthz", "/readyz")}
        if set(codes.values()) != {200}:
            raise CheckError(f"probes: {codes}")
        self.ok(f"as uid {uid}: /metrics on :{metrics_port} (routestatus_status_writes_total"
                f"{{result=\"success\"}} {writes:g}), /healthz and /readyz 200")

        stopping = time.monotonic()
        controller.send_signal(signal.SIGTERM)
        try:
            code = controller.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            raise CheckError(f"the controller did not exit within {grace} s of SIGTERM "
                             "(terminationGracePeriodSeconds)")
        if code != 0:
            self.fail_process(controller, "the controller")
        self.ok(f"SIGTERM: exit 0 after {time.monotonic() - stopping:.1f} s")

    def fail_process(self, process, what):
        raise CheckError(f"{what} exited {process.poll()}:\n" +
                         "".join(self.log_of(process).splitlines(True)[-30:]))


# ---------------------------------------------------------------- main

def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--context", default=".", help="build context (default .)")
    parser.add_argument("--dockerfile", default="Dockerfile")
    parser.add_argument("--work", default="build-image",
                        help="cache of base tarballs, layers and logs (default build-image)")
    parser.add_argument("--apiserver", required=True, help="local-apiserver binary (host)")
    parser.add_argument("--deployment", default="deploy/controller/deployment.yaml")
    parser.add_argument("--runtime-packages", default="deploy/image/runtime-packages.txt",
                        help="the list the final stage must install from")
    parser.add_argument("--no-cache", action="store_true", help="rebuild every layer")
    parser.add_argument("--pull", action="store_true", help="bootstrap the base images again")
    parser.add_argument("--verbose", action="store_true", help="show the output of RUN steps")
    args = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit("image-check: needs root (chroot, mounts, namespaces)")
    # Why: SIGTERM (e.g. from make) unwinds like Ctrl-C, stopping the
    # command under way with its process group.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("image-check: terminated"))
    started = time.monotonic()
    # Why: every mount below lives in this namespace and goes with the process.
    unshare(CLONE_NEWNS)
    run(["mount", "--make-rprivate", "/"])
    os.makedirs(args.work, exist_ok=True)
    lock = open(os.path.join(args.work, "lock"), "w")
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        stages = parse_dockerfile(args.dockerfile)
        builder = Builder(args)
        built = [builder.build(s, i, len(stages)) for i, s in enumerate(stages)]
        build_time = time.monotonic() - started
        builder.prune()
        RuntimeCheck(args, builder, built[0], built[-1]).check()
    except CheckError as e:
        say(f"image-check: FAIL: {e}")
        say(f"image-check: failed after {time.monotonic() - started:.1f} s")
        return 1
    say(f"image-check: PASS in {time.monotonic() - started:.1f} s "
        f"(stages {build_time:.1f} s, checks {time.monotonic() - started - build_time:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
