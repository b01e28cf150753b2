#!/usr/bin/env python3
"""Checks that every relative link in Markdown files resolves.

Usage: check_markdown_links.py ROOT [FILE.md ...]

Without FILEs, every Markdown file git tracks under ROOT (or, outside a git
checkout, every *.md below it) is read. A link [text](target) or
![alt](target), or a reference definition `[label]: target`, is checked when
its target is relative: the file or folder must exist, and a `#anchor` must
name a heading of the target document (GitHub's slugs: lower case, spaces to
'-', punctuation other than '-' and '_' dropped; a repeated heading gets -1,
-2, ...) or an explicit <a name/id="..."> in it. Absolute URLs (http:,
https:, mailto:) are not fetched: no network here. Links inside code spans
and fenced code blocks are not links. Prints one line per broken link as
FILE:LINE: message, then a summary; exits 1 when any link is broken.
"""
import os
import re
import subprocess
import sys

LINK = re.compile(r'!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)')
REFERENCE = re.compile(r'^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$')
HEADING = re.compile(r'^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$')
HTML_ANCHOR = re.compile(r'<a\s+(?:name|id)="([^"]+)"')
FENCE = re.compile(r'^\s{0,3}(```|~~~)')


def slug(heading):
    text = re.sub(r'`', '', heading)
    text = re.sub(r'\[([^\]]*)\]\([^)]*\)', r'\1', text)  # a link's text only
    text = text.strip().lower()
    text = re.sub(r'[^\w\- ]', '', text)
    return text.replace(' ', '-')


def prose_lines(path):
    """(line number, text) of every line outside fenced code, code spans blanked."""
    in_fence = None
    with open(path, encoding='utf-8') as f:
        for number, line in enumerate(f, 1):
            fence = FENCE.match(line)
            if fence:
                if in_fence is None:
                    in_fence = fence.group(1)
                elif fence.group(1) == in_fence:
                    in_fence = None
                continue
            if in_fence is None:
                yield number, re.sub(r'`[^`]*`', '``', line)


_anchors = {}


def anchors(path):
    if path not in _anchors:
        found, seen = set(), {}
        for _, line in prose_lines(path):
            m = HEADING.match(line)
            if m:
                base = slug(m.group(2))
                n = seen.get(base, 0)
                seen[base] = n + 1
                found.add(base if n == 0 else f'{base}-{n}')
            found.update(HTML_ANCHOR.findall(line))
        _anchors[path] = found
    return _anchors[path]


def check(root, path):
    problems = []
    rel = os.path.relpath(path, root)
    for number, line in prose_lines(path):
        targets = LINK.findall(line)
        ref = REFERENCE.match(line)
        if ref:
            targets.append(ref.group(1))
        for target in targets:
            if re.match(r'^[a-z][a-z0-9+.-]*:', target, re.I):
                continue  # http:, https:, mailto: ...
            file_part, _, anchor = target.partition('#')
            if file_part:
                dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part))
                if not dest.startswith(os.path.abspath(root)):
                    problems.append(f'{rel}:{number}: {target}: points outside the repository')
                    continue
                if not os.path.exists(dest):
                    problems.append(f'{rel}:{number}: {target}: no such file')
                    continue
            else:
                dest = path
            if anchor and dest.endswith('.md') and os.path.isfile(dest):
                if anchor not in anchors(dest):
                    problems.append(f'{rel}:{number}: {target}: no heading #{anchor} in '
                                    f'{os.path.relpath(dest, root)}')
    return problems


def markdown_files(root):
    try:
        out = subprocess.run(['git', '-C', root, 'ls-files', '-co', '--exclude-standard', '*.md'],
                             check=True, capture_output=True, text=True).stdout
        names = [n for n in out.splitlines() if n]
    except (subprocess.CalledProcessError, FileNotFoundError):
        names = [os.path.relpath(os.path.join(d, f), root)
                 for d, _, fs in os.walk(root) for f in fs if f.endswith('.md')]
    # Why: the checker's own test document is broken on purpose.
    skip = ('node_modules/', 'build', '.git/', 'test/docs/testdata/')
    return [os.path.join(root, n) for n in sorted(names)
            if not n.startswith(skip) and '/node_modules/' not in n and os.path.isfile(os.path.join(root, n))]


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    root = os.path.abspath(argv[1])
    files = [os.path.abspath(f) for f in argv[2:]] or markdown_files(root)
    problems = []
    for path in files:
        problems.extend(check(root, path))
    for p in problems:
        print(p)
    print(f'{len(files)} file(s), {len(problems)} broken link(s)')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
