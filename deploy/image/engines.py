"""engines: the container engines the image check drives, podman (here)
and docker (GitHub's runners), behind the same few calls.

Podman is configured by files of its own under the work directory (never
the machine's /etc/containers): runc as the runtime, cgroupfs as the cgroup
manager, default ulimits at the current hard limits (podman's defaults are
above what root may set here), events to a file, and image storage under
the work directory.
"""

import hashlib
import os
import resource
import subprocess

from check_util import run


class Podman:
    """The podman command with this check's configuration. Not thread-safe
    (the check drives it from one thread)."""

    def __init__(self, work):
        self.work = os.path.abspath(work)
        conf_dir = os.path.join(self.work, "podman")
        os.makedirs(conf_dir, exist_ok=True)
        # Why: runtime state belongs on a tmpfs (podman tells a reboot by it);
        # one directory per work directory keeps two clones apart.
        key = hashlib.sha256(self.work.encode()).hexdigest()[:12]
        self.run_root = f"/run/routestatus-image-check-{key}"
        self.ulimits = container_ulimits()
        nofile, nproc = self.ulimits["nofile"], self.ulimits["nproc"]
        self.containers_conf = os.path.join(conf_dir, "containers.conf")
        self.storage_conf = os.path.join(conf_dir, "storage.conf")
        write_if_changed(self.containers_conf, f"""\
# Written by deploy/image/engines.py for `make image-check`.
[containers]
# At the hard limits of the shell that ran the check (ulimit -Hn, -Hu), the
# processes also at most kernel.pid_max: podman's defaults are above what
# root may set on this machine (no CAP_SYS_RESOURCE).
default_ulimits = ["nofile={nofile}:{nofile}", "nproc={nproc}:{nproc}"]

[engine]
# crun fails on this machine's hybrid cgroups; runc with cgroupfs works.
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
events_logfile_path = "{self.work}/podman/events.log"
tmp_dir = "{self.run_root}/libpod"

[network]
network_config_dir = "{self.work}/podman/networks"
""")
        write_if_changed(self.storage_conf, f"""\
# Written by deploy/image/engines.py for `make image-check`.
[storage]
driver = "overlay"
graphroot = "{self.work}/storage"
runroot = "{self.run_root}/storage"
""")
        self.env = dict(os.environ, CONTAINERS_CONF=self.containers_conf,
                        CONTAINERS_STORAGE_CONF=self.storage_conf)

    def describe(self):
        return (f"podman {self.version()} with runc and cgroupfs; CONTAINERS_CONF="
                f"{self.containers_conf} (default_ulimits nofile {self.ulimits['nofile']}, "
                f"nproc {self.ulimits['nproc']}), storage {self.work}/storage")

    def version(self):
        return run(["podman", "--version"], env=self.env).split()[-1]

    name = "podman"

    def argv(self, *args):
        return ["podman", *args]

    def __call__(self, *args, check=True, **kwargs):
        return run(["podman", *args], env=self.env, check=check, **kwargs)

    def image_id(self, ref):
        result = subprocess.run(["podman", "image", "inspect", "--format", "{{.Id}}", ref],
                                env=self.env, capture_output=True, text=True)
        return result.stdout.strip() if result.returncode == 0 else None




class Docker:
    """The docker command as the machine has it configured (GitHub's runners)."""

    name = "docker"

    def __init__(self):
        self.env = dict(os.environ)

    def describe(self):
        return f"docker {self.version()}"

    def version(self):
        return run(["docker", "version", "--format", "{{.Server.Version}}"]).strip()

    def argv(self, *args):
        return ["docker", *args]

    def __call__(self, *args, check=True, **kwargs):
        return run(["docker", *args], env=self.env, check=check, **kwargs)

    def image_id(self, ref):
        result = subprocess.run(["docker", "image", "inspect", "--format", "{{.Id}}", ref],
                                capture_output=True, text=True)
        return result.stdout.strip() if result.returncode == 0 else None


def container_ulimits():
    """nofile and nproc for every container: the current hard limits, as
    `ulimit -Hn` and `ulimit -Hu` print them. Why: root has no
    CAP_SYS_RESOURCE here, so a container cannot get more than its monitor
    (conmon) has, and podman's defaults (1048576) are more. The process
    limit is also kept at kernel.pid_max: conmon runs with at most that
    many here (32768; the shell has 96362), so more fails the same way."""
    def hard(which, cap):
        limit = resource.getrlimit(which)[1]
        return cap if limit == resource.RLIM_INFINITY else min(limit, cap)
    with open("/proc/sys/kernel/pid_max") as f:
        pid_max = int(f.read())
    return {"nofile": hard(resource.RLIMIT_NOFILE, 1048576),
            "nproc": hard(resource.RLIMIT_NPROC, pid_max)}


def write_if_changed(path, text):
    if os.path.exists(path) and open(path).read() == text:
        return
    with open(path + ".new", "w") as f:
        f.write(text)
    os.replace(path + ".new", path)


