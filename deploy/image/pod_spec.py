"""pod_spec: what deploy/controller/deployment.yaml asks of the controller's
containers, as an engine's `run` flags and a kubelet's probes.

Read from the Deployment, not restated: the container's command/args and
env, the pod's and container's securityContext, resources, ports, probes,
emptyDir volumes and terminationGracePeriodSeconds. A field this module
does not know how to honour fails the check (a silent skip would let the
YAML and the check drift apart).
"""

import re
from dataclasses import dataclass, field

import yaml

from check_util import CheckError


@dataclass
class Probe:
    """An httpGet probe as the kubelet runs it: success is a 2xx or 3xx
    answer within timeout_s."""
    kind: str          # liveness, readiness
    path: str
    port: int          # container port
    initial_delay_s: float
    period_s: float
    timeout_s: float
    failure_threshold: int
    success_threshold: int


@dataclass
class PodSpec:
    name: str
    namespace: str
    replicas: int
    service_account: str
    grace_s: int
    uid: int
    gid: int
    run_flags: list              # engine `run` flags before the image
    args: list                   # after the image (the ENTRYPOINT's arguments)
    env: dict
    ports: dict                  # name -> container port
    probes: list = field(default_factory=list)
    notes: list = field(default_factory=list)  # what each Deployment field became


KNOWN_CONTAINER_FIELDS = {"name", "image", "imagePullPolicy", "args", "command", "env", "envFrom",
                          "ports",
                          "livenessProbe", "readinessProbe", "resources", "securityContext",
                          "volumeMounts"}
KNOWN_POD_FIELDS = {"serviceAccountName", "terminationGracePeriodSeconds", "securityContext",
                    "affinity", "containers", "volumes"}


def quantity_bytes(text):
    """A Kubernetes memory quantity (256Mi, 1G, 512M, 1048576) in bytes."""
    units = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40,
             "k": 10**3, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([KMGT]i|[kKMGT])?", str(text))
    if not m:
        raise CheckError(f"memory quantity {text!r} not understood")
    return int(float(m.group(1)) * units.get(m.group(2), 1))


def quantity_cpus(text):
    """A Kubernetes CPU quantity (500m, 2, 0.5) in CPUs."""
    text = str(text)
    return int(text[:-1]) / 1000 if text.endswith("m") else float(text)


def load(path):
    with open(path) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    deployments = [d for d in docs if d.get("kind") == "Deployment"]
    if len(deployments) != 1:
        raise CheckError(f"{path}: expected one Deployment, found {len(deployments)}")
    return parse(deployments[0], path)


def load_sidecar(rendered, container="route-status-controller", path="the sidecar overlay"):
    """The controller's container of a rendered sidecar overlay (the output of
    `kubectl kustomize deploy/examples/sidecar`): the Deployment's container
    named `container`, its envFrom ConfigMaps resolved from the same
    output."""
    docs = [d for d in yaml.safe_load_all(rendered) if d]
    deployments = [d for d in docs if d.get("kind") == "Deployment"]
    if len(deployments) != 1:
        raise CheckError(f"{path}: expected one Deployment, found {len(deployments)}")
    config_maps = {d["metadata"]["name"]: d.get("data", {}) for d in docs
                   if d.get("kind") == "ConfigMap"}
    return parse(deployments[0], path, container, config_maps)


def parse(deployment, path="deployment", container=None, config_maps=None):
    meta = deployment["metadata"]
    pod = deployment["spec"]["template"]["spec"]
    unknown = set(pod) - KNOWN_POD_FIELDS
    if unknown:
        raise CheckError(f"{path}: pod fields this check does not run: {sorted(unknown)}")
    if container is None:
        if len(pod["containers"]) != 1:
            raise CheckError(f"{path}: expected one container, found {len(pod['containers'])}")
        c = pod["containers"][0]
    else:
        named = [x for x in pod["containers"] if x["name"] == container]
        if len(named) != 1:
            raise CheckError(f"{path}: no container named {container}")
        c = named[0]
    unknown = set(c) - KNOWN_CONTAINER_FIELDS
    if unknown:
        raise CheckError(f"{path}: container fields this check does not run: {sorted(unknown)}")
    flags, notes = [], []

    grace = int(pod.get("terminationGracePeriodSeconds", 30))
    flags += [f"--stop-timeout={grace}"]
    notes.append(f"terminationGracePeriodSeconds {grace} -> stop timeout {grace} s")

    pod_sc, sc = pod.get("securityContext", {}), c.get("securityContext", {})
    merged = {**pod_sc, **sc}
    uid, gid = merged.get("runAsUser"), merged.get("runAsGroup")
    if uid is None:
        raise CheckError(f"{path}: no runAsUser (the check runs what the YAML names)")
    gid = uid if gid is None else gid
    flags += [f"--user={uid}:{gid}"]
    notes.append(f"runAsUser/runAsGroup -> --user={uid}:{gid}")
    if merged.get("runAsNonRoot") and uid == 0:
        raise CheckError(f"{path}: runAsNonRoot with runAsUser 0")
    seccomp = merged.get("seccompProfile", {}).get("type", "RuntimeDefault")
    if seccomp == "Unconfined":
        flags += ["--security-opt=seccomp=unconfined"]
    elif seccomp != "RuntimeDefault":
        raise CheckError(f"{path}: seccompProfile {seccomp} not supported by the check")
    notes.append(f"seccompProfile {seccomp} -> the engine's default seccomp profile"
                 if seccomp == "RuntimeDefault" else "seccomp unconfined")
    if sc.get("allowPrivilegeEscalation") is False:
        flags += ["--security-opt=no-new-privileges"]
        notes.append("allowPrivilegeEscalation false -> no-new-privileges")
    if sc.get("readOnlyRootFilesystem"):
        flags += ["--read-only"]
        notes.append("readOnlyRootFilesystem -> --read-only")
    caps = sc.get("capabilities", {})
    flags += [f"--cap-drop={x}" for x in caps.get("drop", [])]
    flags += [f"--cap-add={x}" for x in caps.get("add", [])]
    if caps:
        notes.append(f"capabilities drop {caps.get('drop', [])} add {caps.get('add', [])}")
    if sc.get("privileged"):
        raise CheckError(f"{path}: privileged containers are not run by the check")

    resources = c.get("resources", {})
    limits, requests = resources.get("limits", {}), resources.get("requests", {})
    if "memory" in limits:
        flags += [f"--memory={quantity_bytes(limits['memory'])}b"]
        notes.append(f"limits.memory {limits['memory']} -> --memory")
    if "cpu" in limits:
        flags += [f"--cpus={quantity_cpus(limits['cpu']):g}"]
        notes.append(f"limits.cpu {limits['cpu']} -> --cpus={quantity_cpus(limits['cpu']):g}")
    if "cpu" in requests:
        # Why: the kubelet turns a CPU request into cgroup shares this way.
        shares = max(2, int(quantity_cpus(requests["cpu"]) * 1024))
        flags += [f"--cpu-shares={shares}"]
        notes.append(f"requests.cpu {requests['cpu']} -> --cpu-shares={shares}")

    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    for mount in c.get("volumeMounts", []):
        volume = volumes.get(mount["name"])
        if volume is None or "emptyDir" not in volume:
            raise CheckError(f"{path}: volume {mount['name']}: only emptyDir is run by the check")
        size = volume["emptyDir"].get("sizeLimit")
        # Why: an engine's tmpfs is noexec by default, an emptyDir is not.
        options = ["rw", "exec", "mode=1777"] + ([f"size={quantity_bytes(size)}"] if size else [])
        flags += [f"--tmpfs={mount['mountPath']}:{','.join(options)}"]
        notes.append(f"emptyDir {mount['name']} -> tmpfs at {mount['mountPath']}"
                     + (f" of {size}" if size else ""))

    ports = {}
    for p in c.get("ports", []):
        if p.get("protocol", "TCP") != "TCP":
            raise CheckError(f"{path}: port {p}: only TCP is checked")
        ports[p.get("name", str(p["containerPort"]))] = int(p["containerPort"])

    env = {}
    for source in c.get("envFrom", []):
        name = source.get("configMapRef", {}).get("name")
        if name is None or name not in (config_maps or {}):
            raise CheckError(f"{path}: envFrom {source}: only ConfigMaps of the same output are "
                             "run by the check")
        env.update({k: str(v) for k, v in config_maps[name].items()})
        notes.append(f"envFrom ConfigMap {name} -> {len(config_maps[name])} variables")
    for e in c.get("env", []):
        if "value" not in e:
            raise CheckError(f"{path}: env {e['name']}: only literal values are run by the check")
        env[e["name"]] = str(e["value"])
    if "command" in c:
        flags += [f"--entrypoint={c['command'][0]}"]
    args = list(c.get("command", [])[1:]) + list(c.get("args", []))

    probes = []
    for kind in ("liveness", "readiness"):
        p = c.get(kind + "Probe")
        if p is None:
            continue
        if "httpGet" not in p:
            raise CheckError(f"{path}: {kind}Probe: only httpGet is run by the check")
        port = p["httpGet"]["port"]
        port = ports[port] if isinstance(port, str) else int(port)
        if p["httpGet"].get("scheme", "HTTP") != "HTTP":
            raise CheckError(f"{path}: {kind}Probe: only HTTP is run by the check")
        probes.append(Probe(kind, p["httpGet"].get("path", "/"), port,
                            p.get("initialDelaySeconds", 0), p.get("periodSeconds", 10),
                            p.get("timeoutSeconds", 1), p.get("failureThreshold", 3),
                            p.get("successThreshold", 1)))

    return PodSpec(name=meta["name"], namespace=meta.get("namespace", "default"),
                   replicas=int(deployment["spec"].get("replicas", 1)),
                   service_account=pod.get("serviceAccountName", "default"), grace_s=grace,
                   uid=int(uid), gid=int(gid), run_flags=flags, args=args, env=env, ports=ports,
                   probes=probes, notes=notes)
