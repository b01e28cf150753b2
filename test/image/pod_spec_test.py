"""Tests of deploy/image/pod_spec.py: a Deployment read into run flags."""

import copy
import os
import sys
import unittest

SOURCE = os.environ.get("ROUTESTATUS_SOURCE_DIR",
                        os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(SOURCE, "deploy", "image"))

import pod_spec  # noqa: E402
from check_util import CheckError  # noqa: E402

DEPLOYMENT = {
    "kind": "Deployment",
    "metadata": {"name": "ctl", "namespace": "ns"},
    "spec": {"replicas": 2, "template": {"spec": {
        "serviceAccountName": "sa",
        "terminationGracePeriodSeconds": 20,
        "securityContext": {"runAsNonRoot": True, "runAsUser": 1000, "runAsGroup": 2000,
                            "seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [{
            "name": "c", "image": "img",
            "args": ["--a=1", "-v=2"],
            "env": [{"name": "X", "value": "${name}"}, {"name": "N", "value": 5}],
            "ports": [{"name": "metrics", "containerPort": 9000}],
            "livenessProbe": {"httpGet": {"path": "/healthz", "port": "metrics"},
                              "initialDelaySeconds": 5, "timeoutSeconds": 2},
            "readinessProbe": {"httpGet": {"path": "/readyz", "port": 9000},
                               "periodSeconds": 5, "failureThreshold": 2},
            "resources": {"requests": {"cpu": "50m", "memory": "64Mi"},
                          "limits": {"cpu": "1500m", "memory": "256Mi"}},
            "securityContext": {"allowPrivilegeEscalation": False,
                                "readOnlyRootFilesystem": True,
                                "capabilities": {"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]}},
            "volumeMounts": [{"name": "tmp", "mountPath": "/tmp"}],
        }],
        "volumes": [{"name": "tmp", "emptyDir": {"sizeLimit": "16Mi"}}],
    }}},
}


def with_change(change):
    d = copy.deepcopy(DEPLOYMENT)
    change(d["spec"]["template"]["spec"], d["spec"]["template"]["spec"]["containers"][0])
    return d


class PodSpecTest(unittest.TestCase):
    def test_fields_become_run_flags(self):
        spec = pod_spec.parse(DEPLOYMENT)
        self.assertEqual((spec.name, spec.namespace, spec.replicas, spec.service_account),
                         ("ctl", "ns", 2, "sa"))
        self.assertEqual(spec.grace_s, 20)
        self.assertEqual((spec.uid, spec.gid), (1000, 2000))
        self.assertEqual(spec.args, ["--a=1", "-v=2"])
        self.assertEqual(spec.env, {"X": "${name}", "N": "5"})
        self.assertEqual(spec.ports, {"metrics": 9000})
        self.assertEqual(spec.run_flags, [
            "--stop-timeout=20", "--user=1000:2000", "--security-opt=no-new-privileges",
            "--read-only", "--cap-drop=ALL", "--cap-add=NET_BIND_SERVICE",
            f"--memory={256 * 2**20}b", "--cpus=1.5", "--cpu-shares=51",
            f"--tmpfs=/tmp:rw,exec,mode=1777,size={16 * 2**20}"])

    def test_probes_resolve_named_ports_and_kubelet_defaults(self):
        live, ready = pod_spec.parse(DEPLOYMENT).probes
        self.assertEqual((live.kind, live.path, live.port, live.initial_delay_s, live.period_s,
                          live.timeout_s, live.failure_threshold, live.success_threshold),
                         ("liveness", "/healthz", 9000, 5, 10, 2, 3, 1))
        self.assertEqual((ready.kind, ready.path, ready.port, ready.initial_delay_s,
                          ready.period_s, ready.timeout_s, ready.failure_threshold),
                         ("readiness", "/readyz", 9000, 0, 5, 1, 2))

    def test_container_context_overrides_pod_context(self):
        spec = pod_spec.parse(with_change(lambda pod, c: c["securityContext"].update(runAsUser=7)))
        self.assertIn("--user=7:2000", spec.run_flags)

    def test_what_it_cannot_run_fails(self):
        cases = {
            "unknown container field": lambda pod, c: c.update(lifecycle={}),
            "unknown pod field": lambda pod, c: pod.update(hostNetwork=True),
            "env from a secret": lambda pod, c: c["env"].append(
                {"name": "S", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}),
            "a volume not emptyDir": lambda pod, c: pod.update(
                volumes=[{"name": "tmp", "configMap": {"name": "x"}}]),
            "an exec probe": lambda pod, c: c.update(livenessProbe={"exec": {"command": ["x"]}}),
            "no runAsUser": lambda pod, c: pod["securityContext"].pop("runAsUser"),
            "runAsNonRoot as root": lambda pod, c: pod["securityContext"].update(runAsUser=0),
            "privileged": lambda pod, c: c["securityContext"].update(privileged=True),
        }
        for what, change in cases.items():
            with self.subTest(what), self.assertRaises(CheckError):
                pod_spec.parse(with_change(change))

    def test_quantities(self):
        for text, expected in (("256Mi", 256 * 2**20), ("1G", 10**9), ("512k", 512000),
                               ("1048576", 1048576), ("1.5Gi", int(1.5 * 2**30))):
            self.assertEqual(pod_spec.quantity_bytes(text), expected, text)
        for text, expected in (("500m", 0.5), ("2", 2.0), ("0.25", 0.25)):
            self.assertEqual(pod_spec.quantity_cpus(text), expected, text)
        with self.assertRaises(CheckError):
            pod_spec.quantity_bytes("lots")

    def test_the_repository_deployment_is_runnable(self):
        spec = pod_spec.load(os.path.join(SOURCE, "deploy", "controller", "deployment.yaml"))
        self.assertGreaterEqual(spec.replicas, 1)
        self.assertNotEqual(spec.uid, 0)
        self.assertEqual({p.kind for p in spec.probes}, {"liveness", "readiness"})


if __name__ == "__main__":
    unittest.main()
