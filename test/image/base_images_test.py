"""Tests of deploy/image/base_images.py and clusters.prometheus_samples."""

import os
import sys
import tempfile
import unittest

SOURCE = os.environ.get("ROUTESTATUS_SOURCE_DIR",
                        os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(SOURCE, "deploy", "image"))

import base_images  # noqa: E402
from clusters import prometheus_samples  # noqa: E402


class SlimifyTest(unittest.TestCase):
    def test_removes_what_slim_excludes_and_keeps_copyrights(self):
        with tempfile.TemporaryDirectory() as root:
            files = ["usr/share/doc/bash/copyright", "usr/share/doc/bash/CHANGES.gz",
                     "usr/share/doc/base-files/README", "usr/share/man/man1/ls.1.gz",
                     "usr/share/locale/de/LC_MESSAGES/x.mo", "usr/share/info/dir",
                     "usr/share/zoneinfo/UTC", "usr/bin/ls"]
            for f in files:
                os.makedirs(os.path.join(root, os.path.dirname(f)), exist_ok=True)
                open(os.path.join(root, f), "w").close()
            os.symlink("bash", os.path.join(root, "usr/share/doc/dash"))
            base_images.slimify(root)
            left = sorted(os.path.relpath(os.path.join(d, f), root)
                          for d, dirs, fs in os.walk(root) for f in fs + [
                              x for x in dirs if os.path.islink(os.path.join(d, x))])
            self.assertEqual(left, ["usr/bin/ls", "usr/share/doc/bash/copyright",
                                    "usr/share/zoneinfo/UTC"])
            # The excluded directories stay (dpkg expects them), emptied.
            self.assertTrue(os.path.isdir(os.path.join(root, "usr/share/man")))

    def test_slim_command_keeps_the_excludes_for_later_installs(self):
        with tempfile.TemporaryDirectory() as work:
            argv = base_images.mmdebstrap_argv(work, True, os.path.join(work, "x.tar"))
            self.assertIn("--variant=minbase", argv)
            self.assertTrue(any(a.endswith("/etc/dpkg/dpkg.cfg.d/docker") for a in argv))
            with open(os.path.join(work, "base-conf", "docker")) as f:
                self.assertIn("path-exclude /usr/share/man/*\n", f.read())
            full = base_images.mmdebstrap_argv(work, False, os.path.join(work, "y.tar"))
            self.assertFalse(any("dpkg.cfg.d/docker " in a or a.endswith("dpkg.cfg.d/docker")
                                 for a in full))


class PrometheusSamplesTest(unittest.TestCase):
    def test_reads_labels_and_values(self):
        text = ('# HELP apiserver_request_total x\n'
                'apiserver_request_total{code="200",resource="routes",subresource="status",'
                'verb="PUT"} 7\n'
                'apiserver_request_total{code="409",resource="routes",subresource="status",'
                'verb="PUT"} 1\n'
                'apiserver_request_total_other 3\n'
                'apiserver_request_total 2\n')
        samples = list(prometheus_samples(text, "apiserver_request_total"))
        self.assertEqual(len(samples), 3)
        self.assertEqual(samples[0], ({"code": "200", "resource": "routes",
                                       "subresource": "status", "verb": "PUT"}, 7.0))
        self.assertEqual(samples[2], ({}, 2.0))


if __name__ == "__main__":
    unittest.main()
