"""replica_check: the Deployment's replicas, run by the engine as
deploy/controller/deployment.yaml says, checked against an API server.

Each replica is a container of its own (its own network namespace, as a
pod), with the Deployment's args, env, user, securityContext, resources,
emptyDir mounts and stop timeout (pod_spec.py), the service account token,
CA and namespace mounted read-only at /var/run/secrets/kubernetes.io/
serviceaccount, and KUBERNETES_SERVICE_HOST/PORT set, as the kubelet does.
The check then asks for: every route admitted with one successful status
write per change (counted by the API server), the probes answered as the
kubelet would ask them, /metrics served, the securityContext in force in
the process, and `stop` ending each container within the grace period with
exit code 0.
"""

import json
import os
import re
import secrets
import shutil
import subprocess
import time
import urllib.request

import probes
from check_util import CheckError, run, say, wait_for
from clusters import prometheus_samples

LABEL = "routestatus.image-check=1"
SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"


class Replica:
    """One container of the Deployment: its name, published ports and probers."""

    def __init__(self, name):
        self.name = name
        self.ports = {}     # container port -> "127.0.0.1:N"
        self.probers = []
        self.started = None


class ReplicaCheck:
    """Runs the Deployment's replicas against a cluster (clusters.py) and
    checks them; check() raises CheckError at the first failure and always
    removes its containers and test namespace. Each passed check is printed
    and appended to report. Driven from one thread (the probers have their
    own)."""

    def __init__(self, engine, image, spec, cluster, run_dir, report):
        self.engine, self.image, self.spec, self.cluster = engine, image, spec, cluster
        self.run_dir, self.report = run_dir, report
        self.replicas = []
        self.router = spec.env.get("ROUTER_SERVICE_NAME", "default")
        self.namespace = "image-check-" + secrets.token_hex(3)

    def ok(self, what, text):
        say(f"  ok  {what}: {text}")
        self.report.append((what, text))

    # ------------------------------------------------------------ containers

    def remove_leftovers(self):
        ids = run(self.engine.argv("ps", "-aq", "--filter", f"label={LABEL}"),
                  env=self.engine.env).split()
        if ids:
            run(self.engine.argv("rm", "-f", *ids), env=self.engine.env, check=False)

    def service_account_dir(self):
        path = os.path.join(self.run_dir, "serviceaccount")
        shutil.rmtree(path, ignore_errors=True)
        os.makedirs(path)
        os.chmod(path, 0o755)
        for name, text in (("token", self.cluster.sa_token), ("ca.crt", self.cluster.ca_pem),
                           ("namespace", self.spec.namespace)):
            with open(os.path.join(path, name), "w") as f:
                f.write(text)
            os.chmod(os.path.join(path, name), 0o644)  # the kubelet's defaultMode 0644
        return path

    def run_argv(self, name, sa_dir):
        host, port = self.cluster.service_host, self.cluster.service_port
        kube_env = {"KUBERNETES_SERVICE_HOST": host, "KUBERNETES_SERVICE_PORT": port,
                    "KUBERNETES_SERVICE_PORT_HTTPS": port,
                    "KUBERNETES_PORT": f"tcp://{host}:{port}"}
        argv = self.engine.argv("run", "-d", "--name", name, "--hostname", name,
                                "--label", LABEL, "--pull=never")
        argv += self.cluster.network_flags + self.spec.run_flags
        if self.engine.name == "podman" and "--read-only" in self.spec.run_flags:
            # Why: podman's --read-only also mounts tmpfs on /run, /tmp and
            # /var/tmp; a pod gets only its volumes.
            argv.append("--read-only-tmpfs=false")
        for port in self.spec.ports.values():
            argv += ["-p", f"127.0.0.1::{port}"]
        argv += ["-v", f"{sa_dir}:{SA_DIR}:ro"]
        for key, value in {**self.spec.env, **kube_env}.items():
            argv += ["-e", f"{key}={value}"]
        return argv + [self.image] + self.spec.args

    def start_replicas(self):
        self.remove_leftovers()
        sa_dir = self.service_account_dir()
        for i in range(self.spec.replicas):
            replica = Replica(f"{self.spec.name}-{i}")
            run(self.run_argv(replica.name, sa_dir), env=self.engine.env)
            replica.started = time.monotonic()
            for port in self.spec.ports.values():
                out = run(self.engine.argv("port", replica.name, f"{port}/tcp"),
                          env=self.engine.env).split()
                replica.ports[port] = out[0] if out else None
            for probe in self.spec.probes:
                url = f"http://{replica.ports[probe.port]}{probe.path}"
                replica.probers.append(probes.Prober(probe, url, replica.started))
            self.replicas.append(replica)
        self.ok("replicas", f"{len(self.replicas)} containers ({self.spec.replicas} replicas in "
                            f"the Deployment): " + " ".join(
                                f"{r.name} ({', '.join(f'{p}->{h}' for p, h in r.ports.items())})"
                                for r in self.replicas))

    def inspect(self, name, fmt):
        return run(self.engine.argv("inspect", "--format", fmt, name), env=self.engine.env).strip()

    def check_alive(self):
        for r in self.replicas:
            state = self.inspect(r.name, "{{.State.Status}} {{.State.ExitCode}}")
            if not state.startswith("running"):
                raise CheckError(f"{r.name} is {state}:\n" + self.logs(r.name)[-3000:])

    def logs(self, name):
        """The container's output (the controller logs to stderr)."""
        result = subprocess.run(self.engine.argv("logs", name), stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                env=self.engine.env)
        return result.stdout

    def save_logs(self):
        for r in self.replicas:
            with open(os.path.join(self.run_dir, r.name + ".log"), "w") as f:
                f.write(self.logs(r.name))

    # ------------------------------------------------------------ API side

    def route_path(self, name=""):
        return f"/apis/route.openshift.io/v1/namespaces/{self.namespace}/routes" + (
            f"/{name}" if name else "")

    def create_route(self, name, host):
        spec = {"to": {"kind": "Service", "name": name}}
        if host:
            spec["host"] = host
        self.cluster.admin.call("POST", self.route_path(), {
            "apiVersion": "route.openshift.io/v1", "kind": "Route",
            "metadata": {"name": name}, "spec": spec})

    def expected_host(self, name, host):
        if host:
            return host
        template = self.spec.env.get("ROUTER_SUBDOMAIN", "")
        return template.replace("${name}", name).replace("${namespace}", self.namespace)

    def wait_admitted(self, routes, timeout=90):
        """Waits until each route has our router's entry, Admitted=True,
        with the host it should have."""
        def entry(name):
            route = self.cluster.admin.call("GET", self.route_path(name))
            for ingress in route.get("status", {}).get("ingress", []):
                if ingress.get("routerName") == self.router:
                    return ingress
            return None

        def done():
            self.check_alive()
            for name, host in routes.items():
                ingress = entry(name)
                if ingress is None or ingress.get("host") != self.expected_host(name, host):
                    return False
                admitted = [c for c in ingress.get("conditions", []) if c.get("type") == "Admitted"]
                if not admitted or admitted[0].get("status") != "True":
                    raise CheckError(f"route {self.namespace}/{name}: not admitted: "
                                     f"{json.dumps(ingress)}")
            return True
        started = time.monotonic()
        wait_for(f"routes {sorted(routes)} admitted by router {self.router}", done, timeout)
        return time.monotonic() - started

    def wait_writes_settle(self, quiet_s=3.0, timeout=60):
        """Status write counts once they have not changed for quiet_s."""
        last, since = self.cluster.admin.status_writes(), time.monotonic()
        deadline = time.monotonic() + timeout
        while time.monotonic() - since < quiet_s:
            if time.monotonic() > deadline:
                raise CheckError(f"status writes still going after {timeout} s: {last}")
            time.sleep(0.5)
            now = self.cluster.admin.status_writes()
            if now != last:
                last, since = now, time.monotonic()
        return last

    # ------------------------------------------------------------ the check

    def check(self):
        spec = self.spec
        self.cluster.start()
        self.cluster.admin.ensure_namespace(self.namespace)
        self.cluster.prepare(spec.namespace, spec.service_account)
        routes = {f"web-{i}": f"web-{i}.{self.namespace}.apps.example.com" for i in range(4)}
        routes["hostless"] = None
        for name, host in routes.items():
            self.create_route(name, host)
        before = self.cluster.admin.status_writes()
        try:
            self.start_replicas()
            self.run_checks(routes, before)
        finally:
            for r in self.replicas:
                for p in r.probers:
                    p.stop()
            self.save_logs()
            run(self.engine.argv("rm", "-f", *[r.name for r in self.replicas]),
                env=self.engine.env, check=False)
            self.cluster.admin.request("DELETE", f"/api/v1/namespaces/{self.namespace}")

    def run_checks(self, routes, before):
        spec = self.spec
        seconds = self.wait_admitted(routes)
        self.ok("routes admitted", f"{len(routes)} routes created before the start (one named by "
                f"ROUTER_SUBDOMAIN) admitted by router {self.router} within {seconds:.1f} s")
        changes = len(routes)
        first = "web-0"
        route = self.cluster.admin.call("GET", self.route_path(first))
        routes[first] = f"moved.{self.namespace}.apps.example.com"
        route["spec"]["host"] = routes[first]
        self.cluster.admin.call("PUT", self.route_path(first), route)
        routes["late"] = f"late.{self.namespace}.apps.example.com"
        self.create_route("late", routes["late"])
        changes += 2
        seconds = self.wait_admitted(routes)
        self.ok("route changes", f"a changed spec.host and a new route admitted within "
                                 f"{seconds:.1f} s")
        after = self.wait_writes_settle()
        writes = {k: after[k] - before[k] for k in after}
        total = sum(writes.values())
        text = (f"{changes} changes, {writes['ok']:g} successful status writes (PATCH) of routes/status, "
                f"{writes['conflict']:g} conflicts, {writes['other']:g} other "
                f"({total / changes:.2f} writes per change; apiserver_request_total)")
        if writes["ok"] != changes or total > changes + spec.replicas - 1:
            raise CheckError(f"status writes: {text}; expected {changes} successful and at most "
                             f"{changes + spec.replicas - 1} in all")
        self.ok("status writes", text)

        self.check_metrics(writes["ok"])
        self.check_probes()
        self.check_security()
        self.check_more()
        self.check_stop()

    def check_more(self):
        """What a shape adds before the replicas are stopped (SidecarCheck)."""

    def check_metrics(self, server_ok):
        port = self.spec.ports.get("metrics") or next(iter(self.spec.ports.values()))
        total, states = 0.0, []
        for r in self.replicas:
            with urllib.request.urlopen(f"http://{r.ports[port]}/metrics", timeout=5) as resp:
                code, text = resp.status, resp.read().decode()
            if code != 200 or "routestatus_build_info" not in text:
                raise CheckError(f"{r.name}: GET /metrics answered {code} without "
                                 "routestatus_build_info")
            writes = sum(v for labels, v in prometheus_samples(text, "routestatus_status_writes_total")
                         if labels.get("result") == "success")
            state = [labels["state"] for labels, v in prometheus_samples(text, "routestatus_lease_state")
                     if v == 1]
            total += writes
            states.append(f"{r.name} {state[0] if state else '?'} ({writes:g} writes)")
        if total != server_ok:
            raise CheckError(f"the replicas count {total:g} successful status writes "
                             f"(routestatus_status_writes_total), the server {server_ok:g}")
        self.ok("/metrics", f"200 on :{port} from each replica; lease: " + ", ".join(states))

    def check_probes(self):
        # Why: a liveness probe first runs after its initial delay; wait for
        # two answers from every probe before judging them.
        def answered():
            self.check_alive()
            return all(len(p.snapshot()) >= 2 for r in self.replicas for p in r.probers)
        longest = max([p.initial_delay_s + 2 * p.period_s + p.timeout_s
                       for p in self.spec.probes] + [0])
        wait_for("two answers from every probe", answered, longest + 30, interval=0.5)
        for r in self.replicas:
            for p in r.probers:
                ready_at = p.first_success()
                streak = p.longest_failure_streak(after=ready_at or 0)
                if ready_at is None:
                    raise CheckError(f"{r.name}: {p.summary()}: never succeeded")
                if p.probe.kind == "liveness" and p.longest_failure_streak() >= p.probe.failure_threshold:
                    raise CheckError(f"{r.name}: {p.summary()}: the kubelet would restart it")
                if streak >= p.probe.failure_threshold:
                    raise CheckError(f"{r.name}: {p.summary()}: failed {streak} times in a row "
                                     "after succeeding")
                self.ok(f"{p.probe.kind} {r.name}", f"{p.summary()}; first success "
                                                    f"{ready_at:.1f} s after the start")

    def check_security(self):
        spec = self.spec
        for r in self.replicas:
            pid = self.inspect(r.name, "{{.State.Pid}}")
            with open(f"/proc/{pid}/status") as f:
                status = dict(line.split(":", 1) for line in f if ":" in line)
            uids, gids = status["Uid"].split(), status["Gid"].split()
            if set(uids) != {str(spec.uid)} or set(gids) != {str(spec.gid)}:
                raise CheckError(f"{r.name}: runs as uid {uids} gid {gids}, not "
                                 f"{spec.uid}:{spec.gid}")
            wanted = {"NoNewPrivs": "1" if "--security-opt=no-new-privileges" in spec.run_flags
                      else None, "CapEff": "0000000000000000" if "--cap-drop=ALL" in spec.run_flags
                      else None, "Seccomp": "2"}
            for key, value in wanted.items():
                if value is not None and status[key].strip() != value:
                    raise CheckError(f"{r.name}: {key} {status[key].strip()}, expected {value}")
            if "--read-only" in spec.run_flags:
                result = run(self.engine.argv("exec", r.name, "sh", "-c",
                                              "touch /image-check 2>&1; touch /tmp/image-check && "
                                              "echo tmp-writable"), env=self.engine.env, check=False)
                if "Read-only file system" not in result or "tmp-writable" not in result:
                    raise CheckError(f"{r.name}: root not read-only or /tmp not writable: {result}")
        memory = self.inspect(self.replicas[0].name, "{{.HostConfig.Memory}}")
        cpus = self.inspect(self.replicas[0].name,
                            "{{.HostConfig.NanoCpus}} {{.HostConfig.CpuQuota}} {{.HostConfig.CpuPeriod}}")
        self.ok("securityContext", f"each process uid {spec.uid} gid {spec.gid}, NoNewPrivs 1, "
                "no effective capabilities, seccomp filter on; root read-only, /tmp writable; "
                f"memory limit {int(memory) / 2**20:g} MiB, CPU (nano, quota, period) {cpus}")
        self.report.append(("from the YAML", "; ".join(spec.notes)))

    def check_stop(self):
        spec = self.spec
        results = []
        for r in self.replicas:
            timeout = self.inspect(r.name, "{{.Config.StopTimeout}}")
            started = time.monotonic()
            run(self.engine.argv("stop", r.name), env=self.engine.env, timeout=spec.grace_s + 30)
            seconds = time.monotonic() - started
            code = self.inspect(r.name, "{{.State.ExitCode}}")
            for p in r.probers:
                p.stop()
            if code != "0" or seconds >= spec.grace_s:
                raise CheckError(f"{r.name}: stop took {seconds:.1f} s (grace {spec.grace_s} s, "
                                 f"stop timeout {timeout}), exit code {code}:\n"
                                 + self.logs(r.name)[-2000:])
            results.append(f"{r.name} exit {code} after {seconds:.1f} s")
        self.ok("stop", f"within terminationGracePeriodSeconds {spec.grace_s} "
                        f"(stop timeout {timeout} s): " + ", ".join(results))
