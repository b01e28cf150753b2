"""base_images: the Dockerfile's base images, made here (no registry is
reachable) the way Debian's official images are made (debuerreotype): the
mmdebstrap minbase variant with merged /usr, the official images' apt and
dpkg settings, and for -slim no documentation, manual pages or locales
(dpkg excludes them from later installs too); package lists and caches
removed. Imported and tagged docker.io/library/debian:bookworm and
:bookworm-slim. The tarballs are cached in the work directory and made
again when their mmdebstrap command changes (or with --pull). Needs root.
"""

import fnmatch
import hashlib
import json
import os
import shlex
import subprocess
import sys
import time

from check_util import CheckError, say
from engines import write_if_changed

SUITE = "bookworm"
MIRRORS = ["deb http://deb.debian.org/debian bookworm main",
           "deb http://deb.debian.org/debian bookworm-updates main",
           "deb http://deb.debian.org/debian-security bookworm-security main"]
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

# The settings Debian's official images carry (debuerreotype): apt keeps no
# binary caches, fetches no translations, keeps indexes compressed and does
# not count Suggests as important; dpkg skips fsync.
APT_CONF = {
    "docker-clean": 'Dir::Cache::pkgcache "";\nDir::Cache::srcpkgcache "";\n',
    "docker-no-languages": 'Acquire::Languages "none";\n',
    "docker-gzip-indexes": 'Acquire::GzipIndexes "true";\n',
    "docker-autoremove-suggests": 'Apt::AutoRemove::SuggestsImportant "false";\n',
}
DPKG_CONF = {"docker-apt-speedup": "force-unsafe-io\n"}
# -slim: what debuerreotype-slimify excludes, for the packages installed
# later too (dpkg reads it) and for those already there (slimify() below).
SLIM_EXCLUDES = ["/usr/share/doc/*", "/usr/share/groff/*", "/usr/share/info/*",
                 "/usr/share/linda/*", "/usr/share/lintian/overrides/*",
                 "/usr/share/locale/*", "/usr/share/man/*"]
SLIM_INCLUDES = ["/usr/share/doc/*/copyright"]


def mmdebstrap_argv(work, slim, tarball):
    """mmdebstrap's command line for one base image; its files go in work."""
    conf = os.path.join(os.path.abspath(work), "base-conf")
    os.makedirs(conf, exist_ok=True)
    argv = ["mmdebstrap", "--variant=minbase", "--mode=root", "--format=tar",
            # Why: merged /usr by the usr-is-merged package, as debuerreotype
            # makes it (the default pulls in usrmerge and with it perl).
            "--hook-dir=/usr/share/mmdebstrap/hooks/merged-usr"]
    for name, text in APT_CONF.items():
        write_if_changed(os.path.join(conf, name), text)
        argv.append(f"--customize-hook=upload {conf}/{name} /etc/apt/apt.conf.d/{name}")
    for name, text in DPKG_CONF.items():
        write_if_changed(os.path.join(conf, name), text)
        argv.append(f"--customize-hook=upload {conf}/{name} /etc/dpkg/dpkg.cfg.d/{name}")
    if slim:
        slim_conf = os.path.join(conf, "docker")
        write_if_changed(slim_conf, "".join(
            [f"path-exclude {p}\n" for p in SLIM_EXCLUDES] +
            [f"path-include {p}\n" for p in SLIM_INCLUDES]))
        argv.append(f"--customize-hook=upload {slim_conf} /etc/dpkg/dpkg.cfg.d/docker")
        # The essential packages were unpacked before dpkg read the excludes.
        argv.append("--customize-hook=" + shlex.join(
            [sys.executable, os.path.abspath(__file__), "slimify"]) + ' "$1"')
    # Why: apt wrote its binary caches before docker-clean was there to stop it.
    argv.append('--customize-hook=rm -f "$1"/var/cache/apt/*.bin')
    return argv + [SUITE, tarball] + MIRRORS


def slimify(root):
    """Deletes what SLIM_EXCLUDES names and SLIM_INCLUDES does not, under root."""
    removed = 0
    for pattern in SLIM_EXCLUDES:
        top = os.path.join(root, os.path.dirname(pattern).lstrip("/"))
        for dirpath, dirnames, filenames in os.walk(top, topdown=False):
            for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
                path = os.path.join(dirpath, name)
                inside = "/" + os.path.relpath(path, root)
                if any(fnmatch.fnmatch(inside, p) for p in SLIM_INCLUDES):
                    continue
                os.unlink(path)
                removed += 1
            for name in dirnames:
                path = os.path.join(dirpath, name)
                if os.path.isdir(path) and not os.path.islink(path) and not os.listdir(path):
                    os.rmdir(path)
    print(f"slimify: removed {removed} files", file=sys.stderr)


def base_images(podman, work, refresh=False):
    """Makes (or reuses) the two base tarballs and imports them under the
    official names. Returns {tag: seconds spent} for the report."""
    spent = {}
    record_path = os.path.join(work, "base-images.json")
    record = json.load(open(record_path)) if os.path.exists(record_path) else {}
    for slim in (False, True):
        tag = f"docker.io/library/debian:{SUITE}{'-slim' if slim else ''}"
        tarball = os.path.join(os.path.abspath(work), f"debian-{SUITE}{'-slim' if slim else ''}.tar")
        argv = mmdebstrap_argv(work, slim, tarball)
        key = hashlib.sha256(json.dumps(argv).encode()).hexdigest()
        entry = record.get(tag, {})
        started = time.monotonic()
        if refresh or entry.get("key") != key or not os.path.exists(tarball):
            say(f"image-check: mmdebstrap {'(slim) ' if slim else ''}{SUITE} -> {tarball}")
            log = tarball + ".log"
            with open(log, "w") as f:
                result = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.STDOUT)
            if result.returncode != 0:
                tail = "".join(open(log).readlines()[-20:])
                raise CheckError(f"mmdebstrap exited {result.returncode} (log {log}):\n{tail}")
            entry = {"key": key, "image": None}
        if entry.get("image") is None or podman.image_id(tag) != entry["image"]:
            podman("import", "--change", f"ENV PATH={DEFAULT_PATH}", "--change", 'CMD ["bash"]',
                   tarball, tag)
            entry["image"] = podman.image_id(tag)
        record[tag] = entry
        write_if_changed(record_path, json.dumps(record, indent=2) + "\n")
        spent[tag] = time.monotonic() - started
    return spent


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "slimify":
        slimify(sys.argv[2])
    else:
        sys.exit(f"usage: {sys.argv[0]} slimify ROOT (an mmdebstrap customize hook)")
