#!/usr/bin/python3
"""dockerfile_build: a Dockerfile's stages built in chroots, without an engine.

Used by image_check.py (`make image-check`). Each FROM debian:bookworm[-slim]
starts from a root filesystem made by mmdebstrap (the minbase variant, as the
official images; -slim with their dpkg path excludes), cached as a tarball.
RUN, COPY (from the context, honouring .dockerignore, or --from a stage),
WORKDIR, ENV, USER, EXPOSE, ENTRYPOINT, CMD and LABEL are carried out as
written, each filesystem change in an overlayfs layer of its own, reused
while its instruction, everything before it and the content of the files it
copies are unchanged (an engine's build cache). Any other instruction is an
error: nothing the check does not understand is skipped.

Needs root and a mount namespace of its own (image_check.py makes one).
"""

import ctypes
import dataclasses
import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time

CLONE_NEWNS = 0x00020000
CLONE_NEWNET = 0x40000000
PR_SET_NO_NEW_PRIVS = 38
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

# The official debian images are the minbase variant; -slim also drops
# documentation, manuals and translations for every later install.
SLIM_DPKG_OPTIONS = [
    "path-exclude=/usr/share/doc/*",
    "path-include=/usr/share/doc/*/copyright",
    "path-exclude=/usr/share/groff/*",
    "path-exclude=/usr/share/info/*",
    "path-exclude=/usr/share/linda/*",
    "path-exclude=/usr/share/lintian/overrides/*",
    "path-exclude=/usr/share/locale/*",
    "path-exclude=/usr/share/man/*",
]
BASE_IMAGES = {
    "debian:bookworm": ("bookworm", []),
    "debian:bookworm-slim": ("bookworm", SLIM_DPKG_OPTIONS),
}


class CheckError(Exception):
    """A failed check or build step; the message says what and why."""


def say(text):
    print(text, flush=True)


def libc():
    return ctypes.CDLL(None, use_errno=True)


def unshare(flags):
    if libc().unshare(flags) != 0:
        err = ctypes.get_errno()
        raise CheckError(f"unshare({flags:#x}): {os.strerror(err)} (run as root)")


def run(argv, log=None, **kwargs):
    """Runs a command in a process group of its own (stopped whole when the
    check is interrupted); a failure raises with its output (or the log's
    tail). Returns its stdout, or None when it wrote to log."""
    output = subprocess.PIPE if log is None else log
    process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=output,
                               stderr=subprocess.STDOUT, text=True, start_new_session=True,
                               **kwargs)
    try:
        stdout, _ = process.communicate()
    except BaseException:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        raise
    if process.returncode != 0:
        if log is not None:
            log.flush()
            with open(log.name) as f:
                stdout = "".join(f.readlines()[-40:])
        raise CheckError(f"{short(shlex.join(argv), 300)} exited {process.returncode}"
                         f"{f' (log: {log.name})' if log else ''}:\n{stdout}")
    return stdout


def mount(*args):
    run(["mount", *args])


def sha(*parts):
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode() if isinstance(p, str) else p)
        h.update(b"\0")
    return h.hexdigest()[:16]


# ---------------------------------------------------------------- Dockerfile

@dataclasses.dataclass
class Instruction:
    line: int
    name: str   # upper case
    args: str   # the rest of the line, continuations joined

    def text(self):
        return f"{self.name} {self.args}"


@dataclasses.dataclass
class Stage:
    image: str
    name: str
    instructions: list


def parse_dockerfile(path):
    """Splits the Dockerfile into stages of instructions (comments dropped,
    continuation lines joined as the engine joins them)."""
    stages = []
    pending, start = "", 0
    with open(path) as f:
        lines = f.read().split("\n")
    for number, raw in enumerate(lines, 1):
        if not pending and (raw.strip() == "" or raw.lstrip().startswith("#")):
            continue
        if pending and raw.lstrip().startswith("#"):
            continue  # a comment line inside a continued instruction
        if not pending:
            start = number
        stripped = raw.rstrip()
        if stripped.endswith("\\"):
            pending += stripped[:-1]
            continue
        pending += raw
        word, _, rest = pending.strip().partition(" ")
        inst = Instruction(start, word.upper(), rest.strip())
        pending = ""
        if inst.name == "FROM":
            parts = inst.args.split()
            if len(parts) == 3 and parts[1].upper() == "AS":
                stages.append(Stage(parts[0], parts[2], []))
            elif len(parts) == 1:
                stages.append(Stage(parts[0], str(len(stages)), []))
            else:
                raise CheckError(f"{path}:{start}: unsupported FROM form: {inst.args}")
        elif not stages:
            raise CheckError(f"{path}:{start}: {inst.name} before FROM")
        else:
            stages[-1].instructions.append(inst)
    if pending:
        raise CheckError(f"{path}: ends inside a continued instruction")
    if not stages:
        raise CheckError(f"{path}: no FROM")
    return stages


def exec_form(args, what):
    try:
        value = json.loads(args)
    except json.JSONDecodeError:
        value = None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise CheckError(f"{what} must use the exec form [\"...\"], got: {args}")
    return value


# ---------------------------------------------------------------- context

class DockerIgnore:
    """The context's .dockerignore: patterns relative to the context root,
    `*`/`?` within one path element, `**` across elements, `!` re-includes;
    the last matching pattern wins, and an excluded folder excludes all in it."""

    def __init__(self, context):
        self.rules = []
        path = os.path.join(context, ".dockerignore")
        if not os.path.exists(path):
            return
        with open(path) as f:
            for line in f:
                line = line.strip()
                if not line or line.startswith("#"):
                    continue
                include = line.startswith("!")
                pattern = os.path.normpath(line.lstrip("!").strip()).lstrip("/")
                self.rules.append((include, re.compile(self._regex(pattern))))

    @staticmethod
    def _regex(pattern):
        out, i = "", 0
        while i < len(pattern):
            if pattern.startswith("**/", i):
                out, i = out + "(?:.*/)?", i + 3
            elif pattern.startswith("**", i):
                out, i = out + ".*", i + 2
            elif pattern[i] == "*":
                out, i = out + "[^/]*", i + 1
            elif pattern[i] == "?":
                out, i = out + "[^/]", i + 1
            else:
                out, i = out + re.escape(pattern[i]), i + 1
        return out + r"\Z"

    def excluded(self, rel):
        result = False
        prefixes = [rel[:i] for i, c in enumerate(rel) if c == "/"] + [rel]
        for include, regex in self.rules:
            if any(regex.match(p) for p in prefixes):
                result = not include
        return result


def context_files(context, ignore, source):
    """The (relative path, absolute path) pairs COPY takes for `source`,
    sorted; folders come before what they hold."""
    rel_source = os.path.normpath(source).lstrip("/")
    if rel_source.startswith(".."):
        raise CheckError(f"COPY source outside the context: {source}")
    top = os.path.join(context, rel_source) if rel_source != "." else context
    if not os.path.lexists(top):
        raise CheckError(f"COPY source not in the context: {source}")
    if not os.path.isdir(top) or os.path.islink(top):
        return [(os.path.basename(top), top)], False
    result = []
    for dirpath, dirnames, filenames in os.walk(top):
        rel_dir = os.path.relpath(dirpath, context)
        kept = []
        for name in sorted(dirnames):
            rel = os.path.normpath(os.path.join(rel_dir, name))
            if ignore.excluded(rel):
                continue
            full = os.path.join(dirpath, name)
            result.append((os.path.relpath(full, top), full))
            if not os.path.islink(full):
                kept.append(name)
        dirnames[:] = kept
        for name in sorted(filenames):
            rel = os.path.normpath(os.path.join(rel_dir, name))
            if not ignore.excluded(rel):
                full = os.path.join(dirpath, name)
                result.append((os.path.relpath(full, top), full))
    result.sort()
    return result, True


def content_digest(files):
    h = hashlib.sha256()
    for rel, full in files:
        st = os.lstat(full)
        h.update(f"{rel}\0{st.st_mode:o}\0".encode())
        if os.path.islink(full):
            h.update(os.readlink(full).encode())
        elif os.path.isfile(full):
            with open(full, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
        h.update(b"\0")
    return h.hexdigest()


# ---------------------------------------------------------------- roots

def in_root(root, path, cwd="/"):
    """Host path of `path` inside `root`, resolving symlinks as the chroot
    would (an absolute link points inside the root, never at the host)."""
    parts = [p for p in os.path.join(cwd, path).split("/") if p]
    resolved, hops = [], 0
    while parts:
        part = parts.pop(0)
        if part == ".":
            continue
        if part == "..":
            if resolved:
                resolved.pop()
            continue
        host = os.path.join(root, *resolved, part)
        if os.path.islink(host):
            hops += 1
            if hops > 40:
                raise CheckError(f"too many symlinks resolving {path}")
            target = os.readlink(host)
            if target.startswith("/"):
                resolved = []
            parts = [p for p in target.split("/") if p] + parts
            continue
        resolved.append(part)
    return os.path.join(root, *resolved)


def mount_overlay(target, lowers, upper=None):
    """Mounts the layers (bottom first) at target; read-only without upper."""
    os.makedirs(target, exist_ok=True)
    if upper is None and len(lowers) == 1:
        mount("--bind", "-o", "ro", lowers[0], target)
        mount("-o", "remount,bind,ro", target)
        return
    options = "lowerdir=" + ":".join(reversed(lowers))
    if upper is not None:
        work = upper + ".work"
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        options += f",upperdir={upper},workdir={work}"
    mount("-t", "overlay", "overlay", "-o", options, target)


def mount_system(root, resolv=True):
    """/proc, a minimal /dev, read-only /sys, and the host's resolv.conf and
    hosts (an engine mounts those the same way)."""
    mount("-t", "proc", "proc", os.path.join(root, "proc"))
    dev = os.path.join(root, "dev")
    mount("-t", "tmpfs", "-o", "mode=755,nosuid", "tmpfs", dev)
    for name, major, minor in (("null", 1, 3), ("zero", 1, 5), ("full", 1, 7),
                               ("random", 1, 8), ("urandom", 1, 9), ("tty", 5, 0)):
        path = os.path.join(dev, name)
        os.mknod(path, 0o666 | 0o020000, os.makedev(major, minor))
        os.chmod(path, 0o666)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                         ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")):
        os.symlink(target, os.path.join(dev, name))
    os.makedirs(os.path.join(dev, "shm"))
    mount("-t", "tmpfs", "-o", "mode=1777,nosuid,nodev", "tmpfs", os.path.join(dev, "shm"))
    mount("-t", "sysfs", "-o", "ro,nosuid,nodev,noexec", "sysfs", os.path.join(root, "sys"))
    if resolv:
        for name in ("resolv.conf", "hosts"):
            target = in_root(root, "/etc/" + name)
            if os.path.exists("/etc/" + name) and os.path.isfile(target):
                mount("--bind", "-o", "ro", "/etc/" + name, target)


def unmount_all(root):
    if os.path.ismount(root):
        run(["umount", "--recursive", root])


def enter(root, cwd, uid, gid, no_new_privs=False):
    """preexec_fn: chroot into root at cwd as uid:gid."""
    def child():
        os.chroot(root)
        os.chdir(cwd)
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)
        if no_new_privs:
            libc().prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    return child


def resolve_user(root, spec):
    """USER a[:b] by name or number, from the root's /etc/passwd and group."""
    user, _, group = spec.partition(":")

    def lookup(file, name):
        if name.isdigit():
            return int(name), None
        with open(in_root(root, file)) as f:
            for line in f:
                fields = line.split(":")
                if fields[0] == name:
                    return int(fields[2]), int(fields[3]) if file == "/etc/passwd" else None
        raise CheckError(f"USER {spec}: no {name} in {file} of the image")

    uid, primary = lookup("/etc/passwd", user)
    if group:
        gid, _ = lookup("/etc/group", group)
    else:
        gid = primary if primary is not None else 0
    return uid, gid


# ---------------------------------------------------------------- builder

@dataclasses.dataclass
class BuiltStage:
    name: str
    layers: list          # host folders, bottom first
    workdir: str = "/"
    user: str = "0:0"
    env: dict = dataclasses.field(default_factory=dict)
    entrypoint: list = dataclasses.field(default_factory=list)
    cmd: list = dataclasses.field(default_factory=list)
    exposed: list = dataclasses.field(default_factory=list)
    copied: list = dataclasses.field(default_factory=list)   # COPY sources


class Builder:
    def __init__(self, args):
        self.context = os.path.abspath(args.context)
        self.dockerfile = os.path.abspath(args.dockerfile)
        self.work = os.path.abspath(args.work)
        self.layers_dir = os.path.join(self.work, "layers")
        self.logs = os.path.join(self.work, "logs")
        self.mnt = os.path.join(self.work, "mnt")
        self.no_cache = args.no_cache
        self.pull = args.pull
        self.verbose = args.verbose
        self.ignore = DockerIgnore(self.context)
        self.stages = {}
        self.used_layers = set()
        for d in (self.layers_dir, self.logs, self.mnt):
            os.makedirs(d, exist_ok=True)

    # -- base images

    def base_layer(self, image):
        if image not in BASE_IMAGES:
            raise CheckError(f"FROM {image}: the check makes only {', '.join(BASE_IMAGES)}")
        suite, dpkg_options = BASE_IMAGES[image]
        argv = ["mmdebstrap", "--quiet", "--mode=root", "--format=tar", "--variant=minbase",
                "--hook-dir=/usr/share/mmdebstrap/hooks/merged-usr",
                "--dpkgopt=force-unsafe-io"]
        argv += [f"--dpkgopt={o}" for o in dpkg_options]
        key = "base-" + sha(image, *argv)
        tarball = os.path.join(self.work, "bases", key + ".tar")
        layer = os.path.join(self.layers_dir, key)
        if self.pull and key not in self.used_layers:
            shutil.rmtree(layer, ignore_errors=True)
            if os.path.exists(tarball):
                os.remove(tarball)
        self.used_layers.add(key)
        if os.path.exists(os.path.join(layer, "done")):
            return os.path.join(layer, "diff")
        os.makedirs(os.path.dirname(tarball), exist_ok=True)
        if not os.path.exists(tarball):
            started = time.monotonic()
            say(f"  FROM {image}: mmdebstrap {suite} (minbase) ...")
            with open(os.path.join(self.logs, key + ".log"), "w") as log:
                run(argv + [suite, tarball + ".part"], log=log)
            os.rename(tarball + ".part", tarball)
            say(f"  FROM {image}: bootstrapped in {time.monotonic() - started:.1f} s "
                f"({os.path.relpath(tarball)})")
        shutil.rmtree(layer, ignore_errors=True)
        diff = os.path.join(layer, "diff")
        os.makedirs(diff)
        run(["tar", "--extract", "--file", tarball, "--directory", diff,
             "--numeric-owner", "--preserve-permissions", "--xattrs", "--xattrs-include=*"])
        # Why: the engine mounts these over files of its own init layer.
        for name in ("etc/resolv.conf", "etc/hosts", "etc/hostname"):
            path = os.path.join(diff, name)
            if not os.path.lexists(path):
                open(path, "w").close()
        open(os.path.join(layer, "done"), "w").close()
        return diff

    # -- stages

    def build(self, stage, index, count):
        label = stage.name if not stage.name.isdigit() else f"stage {index + 1}"
        say(f"image-check: [{label}] FROM {stage.image} "
            f"(stage {index + 1} of {count}, {len(stage.instructions)} instructions)")
        built = BuiltStage(stage.name, [self.base_layer(stage.image)])
        chain = sha("FROM", built.layers[0])
        for n, inst in enumerate(stage.instructions, 1):
            step = f"[{label} {n}/{len(stage.instructions)}]"
            chain = self.step(built, inst, chain, step)
        self.stages[stage.name] = built
        return built

    def step(self, built, inst, chain, step):
        name, args = inst.name, inst.args
        if name in ("LABEL",):
            return sha(chain, inst.text())
        if name == "EXPOSE":
            built.exposed += args.split()
            return sha(chain, inst.text())
        if name == "USER":
            built.user = args.strip()
            return sha(chain, inst.text())
        if name == "ENTRYPOINT":
            built.entrypoint = exec_form(args, "ENTRYPOINT")
            return sha(chain, inst.text())
        if name == "CMD":
            built.cmd = exec_form(args, "CMD")
            return sha(chain, inst.text())
        if name == "ENV":
            for word in shlex.split(args):
                if "=" not in word:
                    raise CheckError(f"line {inst.line}: ENV only in the KEY=VALUE form")
                k, v = word.split("=", 1)
                built.env[k] = v
            return sha(chain, inst.text())
        if "$" in args and name in ("WORKDIR", "COPY"):
            raise CheckError(f"line {inst.line}: variables in {name} are not supported")
        if name == "WORKDIR":
            built.workdir = os.path.normpath(os.path.join(built.workdir, args.strip()))
            chain = sha(chain, inst.text())
            return self.layer(built, chain, step, inst.text(), lambda root: os.makedirs(
                in_root(root, built.workdir), exist_ok=True))
        if name == "RUN":
            chain = sha(chain, inst.text())
            return self.layer(built, chain, step, inst.text(),
                              lambda root: self.run_step(built, root, args, chain))
        if name == "COPY":
            return self.copy(built, inst, chain, step)
        raise CheckError(f"line {inst.line}: {name} is not supported by the check; "
                         "teach deploy/image/dockerfile_build.py what an engine does with it")

    def copy(self, built, inst, chain, step):
        words = inst.args.split()
        source_stage = None
        while words and words[0].startswith("--"):
            flag = words.pop(0)
            if flag.startswith("--from="):
                source_stage = flag[len("--from="):]
            else:
                raise CheckError(f"line {inst.line}: COPY {flag} is not supported")
        if len(words) < 2:
            raise CheckError(f"line {inst.line}: COPY needs a source and a destination")
        sources, dest = words[:-1], words[-1]
        dest_abs = os.path.join(built.workdir, dest)
        if len(sources) > 1 and not dest.endswith("/"):
            raise CheckError(f"line {inst.line}: COPY of several sources needs a folder (…/)")
        plan = []   # (files, is_dir, root the sources come from)
        if source_stage is None:
            digest = hashlib.sha256()
            for source in sources:
                files, is_dir = context_files(self.context, self.ignore, source)
                plan.append((files, is_dir))
                digest.update(content_digest(files).encode())
                built.copied.append(source)
            chain = sha(chain, inst.text(), digest.hexdigest())
        else:
            if source_stage not in self.stages:
                raise CheckError(f"line {inst.line}: COPY --from={source_stage}: no such stage before")
            src = self.stages[source_stage]
            chain = sha(chain, inst.text(), *src.layers)

        def apply(root):
            if source_stage is None:
                for files, is_dir in plan:
                    copy_into(root, files, is_dir, dest_abs)
            else:
                src = self.stages[source_stage]
                src_root = os.path.join(self.mnt, "copy-from")
                mount_overlay(src_root, src.layers)
                try:
                    for source in sources:
                        host = in_root(src_root, source)
                        if not os.path.lexists(host):
                            raise CheckError(f"line {inst.line}: COPY --from={source_stage}: "
                                             f"{source} does not exist in that stage")
                        copy_into(root, [(os.path.basename(host), host)], False, dest_abs)
                finally:
                    unmount_all(src_root)
        return self.layer(built, chain, step, inst.text(), apply)

    def layer(self, built, key, step, text, apply):
        """Reuses the layer `key` or makes it by running apply(merged root)."""
        layer = os.path.join(self.layers_dir, key)
        diff = os.path.join(layer, "diff")
        if self.no_cache and key not in self.used_layers:
            shutil.rmtree(layer, ignore_errors=True)
        self.used_layers.add(key)
        if os.path.exists(os.path.join(layer, "done")):
            say(f"  {step} {short(text, 64)}: cached")
            built.layers.append(diff)
            return key
        shutil.rmtree(layer, ignore_errors=True)
        os.makedirs(diff)
        root = os.path.join(self.mnt, "stage")
        started = time.monotonic()
        say(f"  {step} {short(text)}")
        mount_overlay(root, built.layers, diff)
        try:
            apply(root)
        except BaseException:
            unmount_all(root)
            shutil.rmtree(layer, ignore_errors=True)
            raise
        unmount_all(root)
        shutil.rmtree(diff + ".work", ignore_errors=True)
        open(os.path.join(layer, "done"), "w").close()
        say(f"  {step} done in {time.monotonic() - started:.1f} s")
        built.layers.append(diff)
        return key

    def run_step(self, built, root, command, key):
        mount_system(root)
        log_path = os.path.join(self.logs, f"{built.name}-{key}.log")
        env = {"PATH": DEFAULT_PATH, "HOME": "/root", "HOSTNAME": "image-check"}
        env.update(built.env)
        uid, gid = resolve_user(root, built.user)
        os.makedirs(in_root(root, built.workdir), exist_ok=True)
        with open(log_path, "w") as log:
            run(["/bin/sh", "-c", command], log=sys.stdout if self.verbose else log, env=env,
                preexec_fn=enter(root, built.workdir, uid, gid))

    def prune(self, keep_runs=2):
        """Drops the layers that neither this run nor the one before used: a
        changed tree leaves its old layers behind, and going back to the
        previous tree (a list edited and restored) finds its layers again."""
        history_path = os.path.join(self.work, "runs.json")
        try:
            with open(history_path) as f:
                history = json.load(f)
        except (OSError, ValueError):
            history = []
        history = (history + [sorted(self.used_layers)])[-keep_runs:]
        with open(history_path, "w") as f:
            json.dump(history, f)
        keep = {key for run_layers in history for key in run_layers}
        for name in os.listdir(self.layers_dir):
            if name not in keep:
                shutil.rmtree(os.path.join(self.layers_dir, name), ignore_errors=True)


def copy_into(root, files, is_dir, dest):
    """COPY semantics: a folder's content into dest; a file into dest/ (a
    folder) or as dest; everything owned by root, modes kept."""
    if is_dir:
        target_dir = in_root(root, dest)
        os.makedirs(target_dir, exist_ok=True)
        for rel, full in files:
            copy_entry(full, os.path.join(target_dir, rel))
        return
    (_, full), = files
    if dest.endswith("/") or os.path.isdir(in_root(root, dest)):
        os.makedirs(in_root(root, dest), exist_ok=True)
        copy_entry(full, os.path.join(in_root(root, dest), os.path.basename(full)))
    else:
        os.makedirs(os.path.dirname(in_root(root, dest)), exist_ok=True)
        copy_entry(full, in_root(root, dest))


def copy_entry(source, target):
    if os.path.islink(source):
        if os.path.lexists(target):
            os.remove(target)
        os.symlink(os.readlink(source), target)
    elif os.path.isdir(source):
        os.makedirs(target, exist_ok=True)
        shutil.copystat(source, target)
    else:
        shutil.copy2(source, target)
    os.lchown(target, 0, 0)


def short(text, width=100):
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 3] + "..."
