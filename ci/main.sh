#!/usr/bin/env bash
# The main job: everything on the pinned default base, plus the benchmark,
# written up in results/. Installs what it needs (ci/setup-host.sh, as root).
set -euo pipefail
cd "$(dirname "$0")/.."
exec /usr/bin/python3 -m ci.pipeline main "$@"
