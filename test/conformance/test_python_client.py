"""The official Python client (Debian's python3-kubernetes) against the
embedded API server: what a user's script does, as on a real cluster.

Routes go through CustomObjectsApi and DynamicClient (the client has no
Route model), namespaces through CoreV1Api.
"""

import json
import threading
import time
import unittest

from kubernetes import client, dynamic, watch
from kubernetes.client.rest import ApiException

GROUP, VERSION, PLURAL = "route.openshift.io", "v1", "routes"
SERVER = None  # set by run_conformance.py: a local_server.LocalApiServer


def route(name, host=None, labels=None):
    return {"apiVersion": "route.openshift.io/v1", "kind": "Route",
            "metadata": {"name": name, "labels": labels or {"app": name}},
            "spec": {"host": host or name + ".example.com",
                     "to": {"kind": "Service", "name": "svc"}}}


class PythonClientTest(unittest.TestCase):
    ns = None

    @classmethod
    def setUpClass(cls):
        cls.core = client.CoreV1Api(SERVER.api_client)
        cls.custom = client.CustomObjectsApi(SERVER.api_client)

    def setUp(self):
        # A fresh namespace per test, named after it.
        self.ns = "py-" + self._testMethodName.replace("_", "-").lower()[:50]
        self.core.create_namespace({"apiVersion": "v1", "kind": "Namespace",
                                    "metadata": {"name": self.ns}})

    def tearDown(self):
        try:
            self.core.delete_namespace(self.ns)
        except ApiException as e:
            self.assertEqual(e.status, 404)

    def create(self, name, **kwargs):
        return self.custom.create_namespaced_custom_object(
            GROUP, VERSION, self.ns, PLURAL, route(name, **kwargs))

    def get(self, name):
        return self.custom.get_namespaced_custom_object(GROUP, VERSION, self.ns, PLURAL, name)

    def list(self, **kwargs):
        return self.custom.list_namespaced_custom_object(GROUP, VERSION, self.ns, PLURAL, **kwargs)

    def assertApiError(self, status, reason, call, *args, **kwargs):
        with self.assertRaises(ApiException) as caught:
            call(*args, **kwargs)
        self.assertEqual(caught.exception.status, status, caught.exception.body)
        body = json.loads(caught.exception.body) if caught.exception.body else {}
        if reason is not None:
            self.assertEqual(body.get("reason"), reason, caught.exception.body)
        return body

    # --- CRUD -------------------------------------------------------------

    def test_namespace_crud(self):
        ns = self.core.read_namespace(self.ns)
        self.assertEqual(ns.status.phase, "Active")
        self.assertEqual(ns.metadata.labels["kubernetes.io/metadata.name"], self.ns)
        patched = self.core.patch_namespace(self.ns, {"metadata": {"labels": {"team": "a"}}})
        self.assertEqual(patched.metadata.labels["team"], "a")
        patched.metadata.labels["tier"] = "web"
        replaced = self.core.replace_namespace(self.ns, patched)
        self.assertEqual(replaced.metadata.labels["tier"], "web")
        names = [n.metadata.name for n in self.core.list_namespace(label_selector="team=a").items]
        self.assertEqual(names, [self.ns])
        self.core.delete_namespace(self.ns)
        self.assertApiError(404, "NotFound", self.core.read_namespace, self.ns)
        # Like kube-apiserver, namespaces have no deletecollection (nor has the client).
        self.assertApiError(405, "MethodNotAllowed", SERVER.raw, "DELETE", "/api/v1/namespaces")

    def test_route_crud(self):
        created = self.create("web")
        self.assertEqual(created["metadata"]["generation"], 1)
        self.assertIn("uid", created["metadata"])
        got = self.get("web")
        self.assertEqual(got["spec"]["host"], "web.example.com")
        patched = self.custom.patch_namespaced_custom_object(
            GROUP, VERSION, self.ns, PLURAL, "web", {"spec": {"host": "new.example.com"}})
        self.assertEqual(patched["spec"]["host"], "new.example.com")
        self.assertEqual(patched["metadata"]["generation"], 2)
        patched["metadata"]["labels"]["tier"] = "web"
        replaced = self.custom.replace_namespaced_custom_object(
            GROUP, VERSION, self.ns, PLURAL, "web", patched)
        self.assertEqual(replaced["metadata"]["labels"]["tier"], "web")
        deleted = self.custom.delete_namespaced_custom_object(GROUP, VERSION, self.ns, PLURAL, "web")
        self.assertEqual(deleted["status"], "Success")
        self.assertEqual(deleted["details"]["uid"], created["metadata"]["uid"])
        self.assertApiError(404, "NotFound", self.get, "web")
        self.create("again")
        self.assertApiError(409, "AlreadyExists", self.create, "again")
        body = self.assertApiError(422, "Invalid", self.custom.create_namespaced_custom_object,
                                   GROUP, VERSION, self.ns, PLURAL,
                                   {"apiVersion": "route.openshift.io/v1", "kind": "Route",
                                    "metadata": {"name": "bad"}, "spec": {"host": 42}})
        self.assertEqual([c["field"] for c in body["details"]["causes"]], ["spec.host", "spec.to"])

    def test_dynamic_client(self):
        dyn = dynamic.DynamicClient(client.ApiClient(SERVER.api_client.configuration))
        routes = dyn.resources.get(api_version="route.openshift.io/v1", kind="Route")
        routes.create(body=route("dyn"), namespace=self.ns)
        listed = routes.get(namespace=self.ns)
        self.assertEqual([r.metadata.name for r in listed.items], ["dyn"])
        routes.patch(name="dyn", namespace=self.ns, body={"metadata": {"labels": {"x": "y"}}},
                     content_type="application/merge-patch+json")
        self.assertEqual(routes.get(name="dyn", namespace=self.ns).metadata.labels.x, "y")
        namespaces = dyn.resources.get(api_version="v1", kind="Namespace")
        self.assertEqual(namespaces.get(name=self.ns).status.phase, "Active")

    # --- lists --------------------------------------------------------------

    def test_paginated_list_and_selectors(self):
        for i in range(5):
            self.create("r%d" % i, labels={"app": "web" if i % 2 == 0 else "db"})
        names, token, pages, rv = [], None, 0, None
        while True:
            page = self.list(limit=2, _continue=token) if token else self.list(limit=2)
            names += [r["metadata"]["name"] for r in page["items"]]
            rv = rv or page["metadata"]["resourceVersion"]
            self.assertEqual(page["metadata"]["resourceVersion"], rv)  # one snapshot
            pages += 1
            token = page["metadata"].get("continue")
            if not token:
                break
            self.assertEqual(page["metadata"]["remainingItemCount"], 5 - len(names))
        self.assertEqual(names, ["r0", "r1", "r2", "r3", "r4"])
        self.assertEqual(pages, 3)
        web = self.list(label_selector="app=web")
        self.assertEqual([r["metadata"]["name"] for r in web["items"]], ["r0", "r2", "r4"])
        one = self.list(field_selector="metadata.name=r3")
        self.assertEqual([r["metadata"]["name"] for r in one["items"]], ["r3"])
        self.assertApiError(400, "BadRequest", self.list, field_selector="spec.host=x")
        self.assertApiError(400, "BadRequest", self.list, label_selector="app===x")

    def test_expired_continue_is_410_with_a_token_to_go_on(self):
        for i in range(3):
            self.create("r%d" % i)
        first = self.list(limit=1)
        self.create("r3")  # a version after the page's snapshot, then forget the history
        SERVER.compact()
        body = self.assertApiError(410, "Expired", self.list, limit=1,
                                   _continue=first["metadata"]["continue"])
        rest = self.list(_continue=body["metadata"]["continue"])
        # kube's token goes on from the latest state after the page's last key.
        self.assertEqual([r["metadata"]["name"] for r in rest["items"]], ["r1", "r2", "r3"])

    # --- watches ------------------------------------------------------------

    def wait_for_watch(self, before):
        deadline = time.time() + 10
        while SERVER.count(verb="WATCH", resource="routes") <= before:
            self.assertLess(time.time(), deadline, "the watch never reached the server")
            time.sleep(0.02)

    def test_watch_true_from_a_list_version_with_bookmarks_and_timeout(self):
        self.create("r1")
        self.create("r2")
        listed = self.list()
        watches = SERVER.count(verb="WATCH", resource="routes")

        def change():
            self.wait_for_watch(watches)
            self.custom.patch_namespaced_custom_object_status(
                GROUP, VERSION, self.ns, PLURAL, "r1",
                {"status": {"ingress": [{"routerName": "w", "host": "r1.example.com"}]}})
            self.custom.delete_namespaced_custom_object(GROUP, VERSION, self.ns, PLURAL, "r2")

        writer = threading.Thread(target=change)
        writer.start()
        started = time.time()
        events = []
        # The client sends watch=True; a 3 s timeout gets one bookmark 2 s before it ends.
        for event in watch.Watch().stream(
                self.custom.list_namespaced_custom_object, GROUP, VERSION, self.ns, PLURAL,
                resource_version=listed["metadata"]["resourceVersion"],
                allow_watch_bookmarks=True, timeout_seconds=3):
            events.append((event["type"], event["raw_object"]["metadata"].get("name")))
        writer.join()
        self.assertEqual(events[:2], [("MODIFIED", "r1"), ("DELETED", "r2")])
        self.assertEqual(events[2:], [("BOOKMARK", None)])
        self.assertGreater(time.time() - started, 2.5)  # ended by timeoutSeconds

    def test_watch_without_version_starts_with_the_current_objects(self):
        self.create("a")
        self.create("b")
        seen = [(e["type"], e["object"]["metadata"]["name"]) for e in watch.Watch().stream(
            self.custom.list_namespaced_custom_object, GROUP, VERSION, self.ns, PLURAL,
            timeout_seconds=1)]
        self.assertEqual(seen, [("ADDED", "a"), ("ADDED", "b")])

    def test_watch_from_a_compacted_version_is_410(self):
        old = self.list()["metadata"]["resourceVersion"]
        self.create("r1")
        SERVER.compact()
        with self.assertRaises(ApiException) as caught:
            list(watch.Watch().stream(self.custom.list_namespaced_custom_object, GROUP, VERSION,
                                      self.ns, PLURAL, resource_version=old, timeout_seconds=2))
        self.assertEqual(caught.exception.status, 410)
        self.assertIn("too old resource version", caught.exception.reason)

    def test_lenient_booleans(self):
        self.create("a")
        base = "/apis/route.openshift.io/v1/namespaces/%s/routes" % self.ns
        for value in ["True", "yes", "1", "f", ""]:
            raw = SERVER.raw("GET", base, [("watch", value), ("timeoutSeconds", "1")])
            first = json.loads(raw.data.decode().splitlines()[0])
            self.assertEqual(first["type"], "ADDED", value)
        for value in ["false", "FALSE", "0"]:
            raw = SERVER.raw("GET", base, [("watch", value)])
            self.assertEqual(json.loads(raw.data)["kind"], "RouteList", value)

    # --- status subresource, conflicts ---------------------------------------

    def test_status_subresource(self):
        created = self.create("web")
        status = {"ingress": [{"routerName": "r", "host": "web.example.com",
                               "conditions": [{"type": "Admitted", "status": "True"}]}]}
        merged = self.custom.patch_namespaced_custom_object_status(
            GROUP, VERSION, self.ns, PLURAL, "web", {"status": status, "spec": {"host": "no"}})
        self.assertEqual(merged["status"], status)
        self.assertEqual(merged["spec"]["host"], "web.example.com")  # status only
        merged["status"]["ingress"][0]["routerName"] = "r2"
        replaced = self.custom.replace_namespaced_custom_object_status(
            GROUP, VERSION, self.ns, PLURAL, "web", merged)
        self.assertEqual(replaced["status"]["ingress"][0]["routerName"], "r2")
        self.assertEqual(replaced["metadata"]["generation"], 1)
        # The main resource ignores status.
        main = self.custom.patch_namespaced_custom_object(
            GROUP, VERSION, self.ns, PLURAL, "web", {"status": {"ingress": []}})
        self.assertEqual(main["status"]["ingress"][0]["routerName"], "r2")
        # A stale resourceVersion is 409; a missing route 404.
        body = self.assertApiError(409, "Conflict",
                                   self.custom.replace_namespaced_custom_object_status,
                                   GROUP, VERSION, self.ns, PLURAL, "web", merged)
        self.assertIn("the object has been modified", body["message"])
        self.assertApiError(409, "Conflict", self.custom.replace_namespaced_custom_object,
                            GROUP, VERSION, self.ns, PLURAL, "web", created)
        missing = route("missing")
        missing["metadata"]["resourceVersion"] = "1"
        self.assertApiError(404, "NotFound", self.custom.replace_namespaced_custom_object_status,
                            GROUP, VERSION, self.ns, PLURAL, "missing", missing)

    # --- deletecollection, dry run -------------------------------------------

    def test_deletecollection(self):
        for name in ["a", "b", "c", "d"]:
            self.create(name, labels={"batch": "x" if name in "ab" else "y"})
        # CustomObjectsApi 22.6 sends no selector with a deletecollection; the
        # DynamicClient does.
        dyn = dynamic.DynamicClient(client.ApiClient(SERVER.api_client.configuration))
        routes = dyn.resources.get(api_version="route.openshift.io/v1", kind="Route")
        deleted = routes.delete(namespace=self.ns, label_selector="batch=x")
        self.assertEqual([r.metadata.name for r in deleted.items], ["a", "b"])
        self.assertEqual([r["metadata"]["name"] for r in self.list()["items"]], ["c", "d"])
        everything = self.custom.delete_collection_namespaced_custom_object(
            GROUP, VERSION, self.ns, PLURAL)
        self.assertEqual([r["metadata"]["name"] for r in everything["items"]], ["c", "d"])
        self.assertEqual(self.list()["items"], [])

    def test_dry_run(self):
        dry = self.custom.create_namespaced_custom_object(
            GROUP, VERSION, self.ns, PLURAL, route("dry"), dry_run="All")
        self.assertNotIn("resourceVersion", dry["metadata"])
        self.assertApiError(404, "NotFound", self.get, "dry")
        self.create("real")
        self.custom.patch_namespaced_custom_object(
            GROUP, VERSION, self.ns, PLURAL, "real", {"spec": {"host": "x.example.com"}},
            dry_run="All")
        self.assertEqual(self.get("real")["spec"]["host"], "real.example.com")
        self.custom.delete_namespaced_custom_object(GROUP, VERSION, self.ns, PLURAL, "real",
                                                    dry_run="All")
        self.get("real")
        body = self.assertApiError(422, "Invalid", self.custom.create_namespaced_custom_object,
                                   GROUP, VERSION, self.ns, PLURAL, route("x"), dry_run="Yes")
        self.assertEqual(body["details"]["kind"], "CreateOptions")

    # --- what the server counted ------------------------------------------------

    def test_metrics_label_writes_by_http_method(self):
        before = SERVER.request_counts()
        self.create("a")
        obj = self.get("a")
        obj["status"] = {"ingress": []}
        self.custom.replace_namespaced_custom_object_status(GROUP, VERSION, self.ns, PLURAL, "a", obj)
        self.custom.delete_collection_namespaced_custom_object(GROUP, VERSION, self.ns, PLURAL)
        after = SERVER.request_counts()

        def delta(**labels):
            want = set(labels.items())
            return sum(v for k, v in after.items() if want <= k) - sum(
                v for k, v in before.items() if want <= k)

        self.assertEqual(delta(resource="routes", verb="POST", scope="resource", code="201"), 1)
        self.assertEqual(delta(resource="routes", verb="PUT", subresource="status", code="200"), 1)
        self.assertEqual(delta(resource="routes", verb="DELETE", scope="namespace", code="200"), 1)
        for old in ["CREATE", "UPDATE", "DELETECOLLECTION"]:
            self.assertEqual(SERVER.count(verb=old), 0)
