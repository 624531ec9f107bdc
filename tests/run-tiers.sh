#!/usr/bin/env bash
# Run test tiers in order, time each, print a summary; exit non-zero if any failed.
#
#   tests/run-tiers.sh unit api netns browser compose vm
#
# Every tier runs even when an earlier one failed, so one run shows every failure.
set -uo pipefail
cd "$(dirname "$0")/.."
export FULCRUM_DEBUG=1
PYTEST=(.venv/bin/pytest -p no:cacheprovider)
mkdir -p tests/artifacts

tier_lint()    { make -s lint; }
tier_unit()    { "${PYTEST[@]}" api/compiler tests/bench appliance/firstboot/tests && make -s -C agents test && make -s -C appliance/kernel/ip_vs_dllc test && (cd webui && npm test --silent); }
tier_api()     { "${PYTEST[@]}" api tests/cli --ignore=api/compiler; }
tier_netns()   { "${PYTEST[@]}" tests/netns; }
tier_browser() { "${PYTEST[@]}" tests/e2e; }
tier_compose() { (cd tests/compose && go test -count=1 ./...); }
tier_vm()      { tests/vm/run.sh; }
tier_packaging() { tests/packaging/test_debs.sh; }
# The appliance image: build the .debs and the images, boot the qcow2, set it up, use it, upgrade it.
# (Not build.sh's own "check" stage: the acceptance tests boot the qcow2 anyway.)
tier_image()   { appliance/debian/build.sh && images/build.sh rootfs iso qcow2 ova && "${PYTEST[@]}" images/tests tests/vm/image; }

# Leave the private PostgreSQL as we found it: stop it at the end if this run started it.
pg_was_running=$(.venv/bin/python -c 'from tests.harness import pg; print(int(pg.running()))' 2>/dev/null || echo 0)
stop_pg() { [ "$pg_was_running" = 1 ] || .venv/bin/python -m tests.harness.pg stop 2>/dev/null || true; }
trap stop_pg EXIT

declare -a summary
failed=0
for tier in "$@"; do
  if ! declare -F "tier_$tier" >/dev/null; then
    echo "unknown tier: $tier" >&2
    exit 2
  fi
  echo "=== tier $tier ==="
  start=$SECONDS
  if "tier_$tier"; then result=ok; else result=FAILED; failed=1; fi
  summary+=("$(printf '%-8s %-6s %4ds' "$tier" "$result" $((SECONDS - start)))")
done

echo "=== summary ==="
printf '%s\n' "${summary[@]}" | tee tests/artifacts/tiers.txt
exit $failed
