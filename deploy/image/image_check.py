#!/usr/bin/python3
"""image_check: the container image built by a real engine and run as
deploy/controller's Deployment runs it.

Here (`make image-check`): podman, configured by files of its own
(engines.py), builds the Dockerfile unchanged on base images made with
mmdebstrap (base_images.py, no registry being reachable). On GitHub
(.github/workflows/e2e.yml): docker builds it. Either way the check then
fails above the image size bound, and (unless --build-only) runs the
Deployment's replicas from deployment.yaml (pod_spec.py) against an API
server (clusters.py: local-apiserver over TLS here, kind's there) and checks
them (replica_check.py); then, against local-apiserver, the sidecar shape:
deploy/sidecar's Component as deploy/examples/sidecar renders it, each
replica beside a stand-in router (sidecar_check.py). Prints a report; exits
1 on the first failure.
"""

import argparse
import fcntl
import os
import shutil
import signal
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # Why: no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import base_images  # noqa: E402
import image_build  # noqa: E402
import pod_spec  # noqa: E402
from check_util import CheckError, say  # noqa: E402
from clusters import KubeconfigCluster, LocalApiserver  # noqa: E402
from engines import Docker, Podman  # noqa: E402
from replica_check import ReplicaCheck  # noqa: E402
from sidecar_check import SidecarCheck  # noqa: E402

MAX_IMAGE_MB = 120


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--engine", choices=["podman", "docker"], default="podman")
    parser.add_argument("--work", default="build-image",
                        help="base tarballs, podman's configuration and storage, logs "
                             "(default build-image)")
    parser.add_argument("--context", default=".", help="build context (default .)")
    parser.add_argument("--dockerfile", default="Dockerfile")
    parser.add_argument("--image", default="routestatus/route-status-controller:dev",
                        help="tag to build and run")
    parser.add_argument("--no-build", action="store_true",
                        help="check an image already built under --image")
    parser.add_argument("--build-only", action="store_true",
                        help="build and check the size; run nothing")
    parser.add_argument("--pull", action="store_true",
                        help="podman: make the base images again with mmdebstrap")
    parser.add_argument("--max-image-mb", type=float, default=MAX_IMAGE_MB,
                        help=f"image size bound in MB of 10^6 bytes (default {MAX_IMAGE_MB})")
    parser.add_argument("--deployment", default="deploy/controller/deployment.yaml")
    parser.add_argument("--sidecar-overlay", default="deploy/examples/sidecar",
                        help="kustomize overlay of the sidecar shape, run after the Deployment "
                             "against local-apiserver (\"\" skips it)")
    parser.add_argument("--apiserver", help="local-apiserver binary to run the replicas against")
    cluster = parser.add_argument_group("an existing cluster instead (kind)")
    cluster.add_argument("--kubeconfig", help="the check's credentials (admin)")
    cluster.add_argument("--service-host", help="KUBERNETES_SERVICE_HOST the containers dial")
    cluster.add_argument("--service-port", default="443", help="KUBERNETES_SERVICE_PORT")
    cluster.add_argument("--network", help="the containers' network (kind: kind)")
    args = parser.parse_args()
    if not args.build_only and bool(args.apiserver) == bool(args.kubeconfig):
        parser.error("give --apiserver or --kubeconfig (or --build-only)")
    if args.kubeconfig and not args.service_host:
        parser.error("--kubeconfig needs --service-host")
    return args


def main():
    args = parse_args()
    # Why: SIGTERM (e.g. from make) unwinds like Ctrl-C, so the containers
    # started so far are removed.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("image-check: terminated"))
    started = time.monotonic()
    os.makedirs(args.work, exist_ok=True)
    lock = open(os.path.join(args.work, "lock"), "w")
    fcntl.flock(lock, fcntl.LOCK_EX)
    report = []
    try:
        if args.engine == "podman":
            if os.geteuid() != 0:
                raise CheckError("needs root (rootful podman, mmdebstrap --mode=root)")
            engine = Podman(args.work)
        else:
            engine = Docker()
        report.append(("engine", engine.describe()))
        if not args.no_build:
            if engine.name == "podman":
                for tag, seconds in base_images.base_images(engine, args.work, args.pull).items():
                    report.append(("base image", f"{tag} ready in {seconds:.1f} s"))
            log = os.path.join(args.work, "build.log")
            seconds = image_build.build(engine, args.image, args.context, args.dockerfile, log)
            report.append(("build", f"{seconds:.1f} s ({image_build.cached_steps(log)} steps "
                                    f"from the layer cache; log {log})"))
        facts = image_build.image_facts(engine, args.image)
        size_mb = facts["size"] / 1e6
        report.append(("image size", f"{size_mb:.1f} MB ({facts['size']} bytes; bound "
                                     f"{args.max_image_mb:g} MB)"))
        if size_mb > args.max_image_mb:
            raise CheckError(f"{args.image} is {size_mb:.1f} MB, above {args.max_image_mb:g} MB")
        if not args.build_only:
            spec = pod_spec.load(args.deployment)
            run_dir = os.path.join(os.path.abspath(args.work), "last-run")
            shutil.rmtree(run_dir, ignore_errors=True)
            os.makedirs(run_dir)
            if args.apiserver:
                cluster = LocalApiserver(os.path.abspath(args.apiserver), run_dir)
            else:
                cluster = KubeconfigCluster(args.kubeconfig, args.service_host, args.service_port,
                                            args.network, run_dir)
            report.append(("image", f"{args.image}: USER {facts['user']}, ENTRYPOINT "
                                    f"{' '.join(facts['entrypoint'])}, EXPOSE "
                                    f"{' '.join(facts['ports'])}"))
            say(f"image-check: {spec.replicas} replicas of {args.image} as {args.deployment} "
                f"says (logs in {run_dir})")
            try:
                ReplicaCheck(engine, args.image, spec, cluster, run_dir, report).check()
                if args.apiserver and args.sidecar_overlay:
                    check_sidecar(engine, args, cluster, run_dir, report)
            finally:
                cluster.stop()
            report.insert(1, ("API server", cluster.describe()))
    except CheckError as e:
        print_report(report)
        say(f"image-check: FAIL after {time.monotonic() - started:.1f} s: {e}")
        return 1
    print_report(report)
    say(f"image-check: PASS in {time.monotonic() - started:.1f} s")
    return 0


def check_sidecar(engine, args, cluster, run_dir, report):
    """The sidecar shape: the overlay rendered by kubectl kustomize, its
    controller container run beside stand-in routers."""
    rendered = subprocess.run(["kubectl", "kustomize", args.sidecar_overlay], capture_output=True,
                              text=True, stdin=subprocess.DEVNULL)
    if rendered.returncode != 0:
        raise CheckError(f"kubectl kustomize {args.sidecar_overlay}: {rendered.stderr[-2000:]}")
    spec = pod_spec.load_sidecar(rendered.stdout, path=args.sidecar_overlay)
    say(f"image-check: the sidecar shape, {spec.replicas} pods of {args.sidecar_overlay} "
        f"(a stand-in router and {args.image} each)")
    report.append(("sidecar shape", f"{args.sidecar_overlay}: {spec.replicas} pods"))
    SidecarCheck(engine, args.image, spec, cluster, run_dir, report).check()


def print_report(report):
    say("image-check report:")
    for what, text in report:
        say(f"  {what + ':':<16} {text}")


if __name__ == "__main__":
    sys.exit(main())
