"""sidecar_check: the image run as deploy/sidecar's Component runs it, beside
a router, checked against an API server.

The containers are those of the rendered example overlay
(`kubectl kustomize deploy/examples/sidecar`, read by pod_spec.load_sidecar):
for each replica, a stand-in router (the same image running a few lines of
Debian's perl-base: every GET answers 200 while /tmp/ready exists, 503
otherwise, on the router's port 1936) and the controller container with the
Component's args, env (the router's ConfigMap), user, securityContext,
resources and probes, in the stand-in's network namespace as in one pod.
Besides what ReplicaCheck asks of the Deployment's replicas: with every
router not ready no status is written and each controller's /readyz is 503;
with one ready again the change made meanwhile is written, once.
"""

import time
import urllib.error
import urllib.request

import probes
from check_util import CheckError, run, wait_for
from clusters import prometheus_samples
from replica_check import LABEL, Replica, ReplicaCheck

ROUTER_PORT = 1936

# The stand-in router: perl-base is Essential in Debian, so the runtime
# image has it.
STAND_IN = r"""
use IO::Socket::INET;
my $s = IO::Socket::INET->new(LocalAddr => "0.0.0.0:1936", Listen => 16, ReuseAddr => 1)
  or die "stand-in router: listen: $!";
$| = 1;
print "stand-in router listening on :1936\n";
while (my $c = $s->accept) {
  while (defined(my $line = <$c>)) { last if $line =~ /^\r?\n$/; }
  my $ready = -e "/tmp/ready";
  my $body = $ready ? "ok\n" : "not ready\n";
  print $c ($ready ? "HTTP/1.1 200 OK" : "HTTP/1.1 503 Service Unavailable"),
    "\r\nContent-Type: text/plain\r\nContent-Length: ", length($body),
    "\r\nConnection: close\r\n\r\n", $body;
  close $c;
}
"""


class SidecarCheck(ReplicaCheck):
    """ReplicaCheck for the sidecar shape: each replica is a stand-in router
    and the controller sharing one network namespace."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.stand_ins = []

    def start_replicas(self):
        self.remove_leftovers()
        sa_dir = self.service_account_dir()
        host, port = self.cluster.service_host, self.cluster.service_port
        kube_env = {"KUBERNETES_SERVICE_HOST": host, "KUBERNETES_SERVICE_PORT": port,
                    "KUBERNETES_SERVICE_PORT_HTTPS": port,
                    "KUBERNETES_PORT": f"tcp://{host}:{port}"}
        for i in range(self.spec.replicas):
            name = f"{self.spec.name}-{i}"
            stand_in = name + "-router"
            # The pod's network namespace is the stand-in's: it publishes
            # the ports of both containers.
            argv = self.engine.argv("run", "-d", "--name", stand_in, "--hostname", name,
                                    "--label", LABEL, "--pull=never", "--user=65532:65532",
                                    "--entrypoint=sh", "-e", "STAND_IN=" + STAND_IN)
            argv += self.cluster.network_flags
            for p in [ROUTER_PORT] + list(self.spec.ports.values()):
                argv += ["-p", f"127.0.0.1::{p}"]
            argv += [self.image, "-c", 'touch /tmp/ready && exec perl -e "$STAND_IN"']
            run(argv, env=self.engine.env)
            self.stand_ins.append(stand_in)
            argv = self.engine.argv("run", "-d", "--name", name, "--label", LABEL,
                                    "--pull=never", f"--network=container:{stand_in}")
            argv += self.spec.run_flags
            if self.engine.name == "podman" and "--read-only" in self.spec.run_flags:
                argv.append("--read-only-tmpfs=false")
            argv += ["-v", f"{sa_dir}:/var/run/secrets/kubernetes.io/serviceaccount:ro"]
            for key, value in {**self.spec.env, **kube_env}.items():
                argv += ["-e", f"{key}={value}"]
            run(argv + [self.image] + self.spec.args, env=self.engine.env)
            replica = Replica(name)
            replica.started = time.monotonic()
            for p in [ROUTER_PORT] + list(self.spec.ports.values()):
                out = run(self.engine.argv("port", stand_in, f"{p}/tcp"),
                          env=self.engine.env).split()
                replica.ports[p] = out[0] if out else None
            for probe in self.spec.probes:
                url = f"http://{replica.ports[probe.port]}{probe.path}"
                replica.probers.append(probes.Prober(probe, url, replica.started))
            self.replicas.append(replica)
        self.ok("sidecars", f"{len(self.replicas)} pods of a stand-in router and the controller "
                            "in one network namespace: " + " ".join(
                                f"{r.name} (router {r.ports[ROUTER_PORT]}, controller "
                                f"{r.ports[self.metrics_port()]})" for r in self.replicas))

    def check(self):
        try:
            super().check()
        finally:
            if self.stand_ins:
                run(self.engine.argv("rm", "-f", *self.stand_ins), env=self.engine.env,
                    check=False)

    def metrics_port(self):
        return next(iter(self.spec.ports.values()))

    def set_router_ready(self, index, ready):
        script = "touch /tmp/ready" if ready else "rm -f /tmp/ready"
        run(self.engine.argv("exec", self.stand_ins[index], "sh", "-c", script),
            env=self.engine.env)

    def router_ready_metric(self, replica):
        url = f"http://{replica.ports[self.metrics_port()]}/metrics"
        with urllib.request.urlopen(url, timeout=5) as resp:
            text = resp.read().decode()
        values = [v for _, v in prometheus_samples(text, "routestatus_router_ready")]
        return values[0] if values else None

    def readyz(self, replica):
        url = f"http://{replica.ports[self.metrics_port()]}/readyz"
        try:
            with urllib.request.urlopen(url, timeout=5) as resp:
                return resp.status
        except urllib.error.HTTPError as e:
            return e.code

    def check_more(self):
        """Every router not ready: nothing written, no controller ready; one
        back: the change made meanwhile written once."""
        for i in range(len(self.stand_ins)):
            self.set_router_ready(i, False)
        for r in self.replicas:
            wait_for(f"{r.name} to see its router not ready",
                     lambda r=r: self.router_ready_metric(r) == 0, 15)
            if self.readyz(r) != 503:
                raise CheckError(f"{r.name}: /readyz answers {self.readyz(r)} with its router "
                                 "not ready")
        before = self.cluster.admin.status_writes()
        host = f"while-down.{self.namespace}.apps.example.com"
        self.create_route("while-down", host)
        time.sleep(5)
        during = {k: v - before[k] for k, v in self.cluster.admin.status_writes().items()}
        if sum(during.values()) != 0:
            raise CheckError(f"status written with every router down: {during}")
        self.ok("routers down", "every stand-in not ready: each controller's "
                                "routestatus_router_ready 0 and /readyz 503; a route created "
                                "then got no status write in 5 s")
        started = time.monotonic()
        self.set_router_ready(0, True)
        seconds = self.wait_admitted({"while-down": host}, timeout=30)
        after = self.wait_writes_settle()
        writes = {k: after[k] - before[k] for k in after}
        if writes["ok"] != 1:
            raise CheckError(f"one router back: {writes} status writes for one change")
        self.ok("router back", f"{self.replicas[0].name}'s router ready again: the route created "
                               f"meanwhile admitted {time.monotonic() - started:.1f} s later "
                               f"({seconds:.1f} s after the wait began), with 1 status write "
                               f"({writes['conflict']:g} conflicts)")
        for i in range(1, len(self.stand_ins)):
            self.set_router_ready(i, True)
