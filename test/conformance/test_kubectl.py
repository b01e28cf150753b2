"""The real kubectl against the embedded API server, as a user runs it."""

import json
import os
import subprocess
import tempfile
import time
import unittest

SERVER = None  # set by run_conformance.py: a local_server.LocalApiServer
KUBECTL = "kubectl"

ROUTE = """apiVersion: route.openshift.io/v1
kind: Route
metadata:
  name: {name}
  namespace: {ns}
  labels:
    app: {app}
spec:
  host: {name}.example.com
  to:
    kind: Service
    name: svc
"""


class KubectlTest(unittest.TestCase):

    def setUp(self):
        self.home = tempfile.mkdtemp(prefix="kubectl-home-")
        self.ns = "kc-" + self._testMethodName.replace("_", "-").lower()[:50]
        self.kubectl("create", "namespace", self.ns)

    def tearDown(self):
        self.kubectl("delete", "namespace", self.ns, "--wait=false", check=False)

    def kubectl(self, *args, check=True, stdin=None):
        env = dict(os.environ, KUBECONFIG=SERVER.kubeconfig, HOME=self.home)
        done = subprocess.run([KUBECTL, *args], input=stdin, capture_output=True, text=True,
                              env=env, timeout=60)
        if check and done.returncode != 0:
            self.fail("kubectl %s failed (%d): %s%s" % (" ".join(args), done.returncode,
                                                        done.stdout, done.stderr))
        return done

    def apply_route(self, name, app=None):
        return self.kubectl("apply", "-f", "-",
                            stdin=ROUTE.format(name=name, ns=self.ns, app=app or name))

    def route_json(self, name):
        return json.loads(self.kubectl("get", "route", name, "-n", self.ns, "-o", "json").stdout)

    def test_printer_columns_without_a_crd(self):
        self.apply_route("web")
        self.kubectl("patch", "route", "web", "-n", self.ns, "--subresource=status",
                     "--type=merge", "-p",
                     '{"status":{"ingress":[{"routerName":"default","host":"web.example.com",'
                     '"conditions":[{"type":"Admitted","status":"True"}]}]}}')
        out = self.kubectl("get", "routes", "-A").stdout.splitlines()
        self.assertEqual(out[0].split(), ["NAMESPACE", "NAME", "HOST", "ADMITTED", "SERVICE",
                                          "TLS", "AGE"])
        row = [line.split() for line in out[1:] if line.split()[:2] == [self.ns, "web"]]
        self.assertEqual(row[0][2:5], ["web.example.com", "True", "svc"], out)

    def test_crud_on_routes_and_namespaces(self):
        created = self.apply_route("web")
        self.assertIn("route.route.openshift.io/web created", created.stdout)
        self.assertEqual(self.route_json("web")["spec"]["host"], "web.example.com")
        self.kubectl("label", "route", "web", "-n", self.ns, "tier=front")
        self.kubectl("annotate", "route", "web", "-n", self.ns, "note=hi")
        self.kubectl("patch", "route", "web", "-n", self.ns, "--type=merge",
                     "-p", '{"spec":{"host":"new.example.com"}}')
        obj = self.route_json("web")
        self.assertEqual(obj["metadata"]["labels"]["tier"], "front")
        self.assertEqual(obj["metadata"]["annotations"]["note"], "hi")
        self.assertEqual(obj["spec"]["host"], "new.example.com")
        obj["spec"]["host"] = "replaced.example.com"
        self.kubectl("replace", "-f", "-", stdin=json.dumps(obj))
        self.assertEqual(self.route_json("web")["spec"]["host"], "replaced.example.com")
        # The object read before the replace is stale now.
        stale = self.kubectl("replace", "-f", "-", stdin=json.dumps(obj), check=False)
        self.assertNotEqual(stale.returncode, 0)
        self.assertIn("the object has been modified", stale.stderr)
        missing = self.kubectl("get", "route", "missing", "-n", self.ns, check=False)
        self.assertNotEqual(missing.returncode, 0)
        self.assertIn('routes.route.openshift.io "missing" not found', missing.stderr)
        self.kubectl("label", "namespace", self.ns, "team=a")
        self.assertIn(self.ns, self.kubectl("get", "ns", "-l", "team=a", "-o", "name").stdout)
        self.kubectl("delete", "route", "web", "-n", self.ns)
        self.assertIn("No resources found", self.kubectl("get", "routes", "-n", self.ns).stderr)

    def test_chunked_list_and_selectors(self):
        for i in range(5):
            self.apply_route("r%d" % i, app="web" if i < 3 else "db")
        names = self.kubectl("get", "routes", "-n", self.ns, "--chunk-size=2", "-o",
                             "name").stdout.split()
        self.assertEqual(names, ["route.route.openshift.io/r%d" % i for i in range(5)])
        web = self.kubectl("get", "routes", "-n", self.ns, "-l", "app=web", "-o", "name")
        self.assertEqual(len(web.stdout.split()), 3)
        one = self.kubectl("get", "routes", "-n", self.ns, "--field-selector",
                           "metadata.name=r4", "-o", "name")
        self.assertEqual(one.stdout.split(), ["route.route.openshift.io/r4"])
        bad = self.kubectl("get", "routes", "-n", self.ns, "--field-selector", "spec.host=x",
                           check=False)
        self.assertIn("field label not supported: spec.host", bad.stderr)

    def test_watch_sees_status_writes(self):
        self.apply_route("web")
        env = dict(os.environ, KUBECONFIG=SERVER.kubeconfig, HOME=self.home)
        watches = SERVER.count(verb="WATCH", resource="routes")
        watcher = subprocess.Popen([KUBECTL, "get", "routes", "-n", self.ns, "-w", "-o",
                                    "custom-columns=NAME:.metadata.name,ROUTER:.status.ingress[0].routerName"],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        try:
            deadline = time.time() + 20
            while SERVER.count(verb="WATCH", resource="routes") <= watches:
                self.assertLess(time.time(), deadline, "kubectl never watched")
                time.sleep(0.05)
            self.kubectl("patch", "route", "web", "-n", self.ns, "--subresource=status",
                         "--type=merge", "-p",
                         '{"status":{"ingress":[{"routerName":"seen","host":"web.example.com"}]}}')
            lines = []
            while time.time() < deadline:
                line = watcher.stdout.readline()
                lines.append(line)
                if line.split() == ["web", "seen"]:
                    break
            self.assertEqual(lines[-1].split(), ["web", "seen"], lines)
        finally:
            watcher.kill()
            watcher.wait()

    def test_status_subresource(self):
        self.apply_route("web")
        self.kubectl("patch", "route", "web", "-n", self.ns, "--subresource=status",
                     "--type=merge", "-p",
                     '{"spec":{"host":"no"},"status":{"ingress":[{"routerName":"r"}]}}')
        obj = self.route_json("web")
        self.assertEqual(obj["status"]["ingress"][0]["routerName"], "r")
        self.assertEqual(obj["spec"]["host"], "web.example.com")
        obj["status"]["ingress"][0]["routerName"] = "r2"
        self.kubectl("replace", "--subresource=status", "-f", "-", stdin=json.dumps(obj))
        self.assertEqual(self.route_json("web")["status"]["ingress"][0]["routerName"], "r2")

    def test_dry_run_changes_nothing(self):
        out = self.kubectl("apply", "--dry-run=server", "-f", "-",
                           stdin=ROUTE.format(name="dry", ns=self.ns, app="dry"))
        self.assertIn("(server dry run)", out.stdout)
        self.assertNotEqual(self.kubectl("get", "route", "dry", "-n", self.ns,
                                         check=False).returncode, 0)
        self.apply_route("web")
        self.kubectl("delete", "route", "web", "-n", self.ns, "--dry-run=server")
        self.route_json("web")
        self.kubectl("delete", "routes", "--all", "-n", self.ns)
        self.assertIn("No resources found", self.kubectl("get", "routes", "-n", self.ns).stderr)
