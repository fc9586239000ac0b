#!/usr/bin/env bash
# The test command: host unit tests, pipeline self-tests, the series applied,
# checked per patch, built, KUnit in UML, base and patched kernels booted
# with the selftests. Installs what it needs (ci/setup-host.sh, as root).
set -euo pipefail
cd "$(dirname "$0")/.."
exec /usr/bin/python3 -m ci.pipeline test "$@"
