#!/usr/bin/python3
"""Client conformance suite (ctest `client_conformance`, label integration).

Starts local-apiserver (TLS and a token, as a cluster would have them) and
drives it with clients routestatus did not write: the official Python client
(Debian's python3-kubernetes) and the real kubectl. Exits non-zero, saying
what is missing, when a client is not installed.

  run_conformance.py --apiserver build/cmd/local-apiserver/local-apiserver \
      [--kubectl /usr/bin/kubectl] [unittest names...]
"""

import argparse
import os
import shutil
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--apiserver", required=True, help="the local-apiserver binary")
    parser.add_argument("--kubectl", default="kubectl", help="kubectl to run (default: PATH)")
    parser.add_argument("tests", nargs="*", help="unittest names (default: every test)")
    args = parser.parse_args()

    try:
        import kubernetes  # noqa: F401  (the official client)
    except ImportError:
        print("client conformance: the official Python client is missing: install Debian's "
              "python3-kubernetes (`make deps` does) for %s" % sys.executable, file=sys.stderr)
        return 1
    kubectl = shutil.which(args.kubectl)
    if kubectl is None:
        print("client conformance: kubectl not found (%s); install kubectl" % args.kubectl,
              file=sys.stderr)
        return 1
    if not os.access(args.apiserver, os.X_OK):
        print("client conformance: no local-apiserver at %s" % args.apiserver, file=sys.stderr)
        return 1

    sys.path.insert(0, HERE)
    import local_server
    import test_kubectl
    import test_python_client

    print("client conformance: python3-kubernetes %s (%s), %s" %
          (kubernetes.__version__, sys.executable, kubectl))
    server = local_server.LocalApiServer(args.apiserver)
    try:
        test_python_client.SERVER = server
        test_kubectl.SERVER = server
        test_kubectl.KUBECTL = kubectl
        loader = unittest.TestLoader()
        if args.tests:
            suite = loader.loadTestsFromNames(args.tests)
        else:
            suite = unittest.TestSuite([loader.loadTestsFromModule(test_python_client),
                                        loader.loadTestsFromModule(test_kubectl)])
        result = unittest.TextTestRunner(verbosity=2).run(suite)
        if not result.wasSuccessful():
            print("local-apiserver log: %s" % server.log_path, file=sys.stderr)
        return 0 if result.wasSuccessful() else 1
    finally:
        server.stop()


if __name__ == "__main__":
    sys.exit(main())
