"""image_build: builds the Dockerfile with a real engine and measures the image."""

import json
import subprocess
import time

from check_util import CheckError, run, say


def build(engine, tag, context, dockerfile, log_path, extra=()):
    """Runs `ENGINE build` (podman: --pull=never --network=host, the base
    images being local; docker: as a user would). Returns the seconds it took;
    a failed build raises CheckError with the log's tail."""
    argv = engine.argv("build", "-f", dockerfile, "-t", tag, *extra)
    if engine.name == "podman":
        argv += ["--pull=never", "--network=host", "--layers"]
    argv.append(context)
    say(f"image-check: {' '.join(argv)} (log {log_path})")
    started = time.monotonic()
    with open(log_path, "w") as log:
        result = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                env=engine.env)
    seconds = time.monotonic() - started
    if result.returncode != 0:
        tail = "".join(open(log_path).readlines()[-40:])
        raise CheckError(f"the build exited {result.returncode} after {seconds:.0f} s:\n{tail}")
    return seconds


def cached_steps(log_path):
    """How many build steps the engine took from its cache (podman and
    docker both print "Using cache" / "CACHED")."""
    text = open(log_path).read()
    return text.count("Using cache") + text.count(" CACHED")


def image_facts(engine, tag):
    """Size in bytes (all layers, uncompressed, as `images` shows it), user,
    entrypoint, exposed ports and environment of an image."""
    out = run(engine.argv("image", "inspect", "--format",
                          "{{.Size}}|{{.Config.User}}|{{json .Config.Entrypoint}}|"
                          "{{json .Config.ExposedPorts}}|{{json .Config.Env}}", tag), env=engine.env)
    size, user, entrypoint, ports, env = out.strip().split("|", 4)
    return {"size": int(size), "user": user, "entrypoint": json.loads(entrypoint) or [],
            "ports": sorted((json.loads(ports) or {}).keys()), "env": json.loads(env) or []}
