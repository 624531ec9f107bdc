#!/usr/bin/env bash
# Run test tiers, time each, count their tests, print a table; exit non-zero if any failed.
#
#   tests/run-tiers.sh unit api        these tiers, one after another (make test-unit)
#   tests/run-tiers.sh lint unit + api two lanes at once: lint then unit, and api (make check)
#   tests/run-tiers.sh --all           every tier, as `make test` runs them (below)
#
# Every tier runs even when an earlier one failed, so one run shows every failure. Each
# tier's output goes to tests/artifacts/tiers/<tier>.log, its test results (JUnit XML, checks)
# to tests/artifacts/results/<tier>/; the table at the end (tests/harness/tiers.py) gives each
# tier's result, start, wall time and tests passed, failed and skipped, and is also written
# to tests/artifacts/tiers.json.
#
# The first lane's output is shown as it comes; the others' logs at the end, if they fail.
# --all keeps both cores busy with three lanes at once:
#   host   netns lint unit api browser compose packaging, one after another
#   image  the image tier: the .debs, the appliance rootfs and ISO, the qcow2 and OVA, then
#          the booted appliance's acceptance tests
#   vm     the vm tier: its guest, made from the appliance rootfs, and the guest tests
# The QEMU tiers are single-threaded or mostly waiting under TCG; the builds that run
# beside them are niced. The failover measurements (the Go TestVRRP* tests and
# tests/netns/test_ha.py) run first, while no guest runs: the image and vm lanes boot nothing
# until they are done.
set -uo pipefail
cd "$(dirname "$0")/.."
export FULCRUM_DEBUG=1
readonly ARTIFACTS=tests/artifacts
readonly LOGS=$ARTIFACTS/tiers RESULTS=$ARTIFACTS/results
readonly TSV=$ARTIFACTS/tiers.tsv
# While this file exists, no guest may boot (the failover measurements run).
readonly QUIET=$ARTIFACTS/run/failover-measurements
readonly GOTESTSUM="go run gotest.tools/gotestsum@v1.13.0 --format pkgname-and-test-fails"
# Go tests that time failovers (real keepalived in namespaces): with the netns tier's failover
# measurements, not in the unit tier.
readonly GO_FAILOVER_TESTS='^TestVRRP'

export PATH="$PATH:/usr/local/go/bin"

# -- how a tier reports its tests --------------------------------------------------------------

# pytest_junit NAME ARGS...: pytest, its results in the tier's NAME.xml
pytest_junit() {
  local name=$1
  shift
  .venv/bin/pytest -p no:cacheprovider --junitxml="$R/$name.xml" -o junit_family=xunit2 "$@"
}

# gotest_junit NAME DIR ARGS...: go test in DIR through gotestsum, its results in NAME.xml
gotest_junit() {
  local name=$1 dir=$2
  shift 2
  (cd "$dir" && $GOTESTSUM --junitfile "$OLDPWD/$R/$name.xml" -- -count=1 "$@")
}

# check NAME CMD...: one check that is not a test suite (a linter, a script); ok or failed
check() {
  local name=$1 status=0
  shift
  "$@" || status=$?
  printf '%s\t%s\n' "$name" "$( ((status == 0)) && echo ok || echo failed)" >>"$R/checks.tsv"
  return "$status"
}

# wait_for_quiet: returns once no failover measurement runs (--all; at once otherwise)
wait_for_quiet() {
  [[ -e $QUIET ]] || return 0
  echo "waiting for the failover measurements to end before booting a guest"
  while [[ -e $QUIET ]]; do sleep 2; done
}

# batch CMD...: a build that runs beside tests: niced, so that it takes what they leave
batch() { nice -n 10 "$@"; }

# -- the tiers ---------------------------------------------------------------------------------

tier_lint() {
  local status=0
  check ruff make -s lint-python || status=1
  check django make -s lint-django || status=1
  check go make -s lint-go || status=1
  check console make -s lint-console || status=1
  return "$status"
}

tier_unit() {
  local status=0
  pytest_junit python api/compiler tests/bench tests/deps tests/harness appliance/firstboot/tests || status=1
  gotest_junit go agents ./... -skip "$GO_FAILOVER_TESTS" || status=1
  check ip_vs_dllc-maths make -s -C appliance/kernel/ip_vs_dllc test || status=1
  (cd webui && npm test --silent -- --reporter=default --reporter=junit --outputFile.junit="../$R/console.xml") ||
    status=1
  return "$status"
}

tier_api() { pytest_junit api api tests/cli tests/pair --ignore=api/compiler; }

# The failover measurements first, alone (see the header): the agent's VRRP tests against
# real keepalived (Go, bounds of a second or two) and test_ha.py; then the rest of the tier.
tier_netns() {
  local status=0
  gotest_junit failover-go agents ./internal/ha ./cmd/fulcrum-agent -run "$GO_FAILOVER_TESTS" || status=1
  pytest_junit failover tests/netns/test_ha.py || status=1
  rm -f "$QUIET"
  pytest_junit netns tests/netns --ignore=tests/netns/test_ha.py || status=1
  return "$status"
}

tier_browser() { pytest_junit browser tests/e2e; }
tier_compose() { gotest_junit compose tests/compose ./...; }

# The packages: built once for this tier and the image (appliance/debian/build.sh skips a
# build it has made from the same sources), then tested in a trixie root.
# Each "  ok  WHAT" line of the script (tests/packaging/in-root.sh's pass) counts as a check.
tier_packaging() {
  batch appliance/debian/build.sh || return 1
  local status=0
  tests/packaging/test_debs.sh --debs images/.build/debs 2>&1 | tee "$R/packaging.out" || status=1
  sed -n 's/^  ok  \(.*\)$/\1\tok/p' "$R/packaging.out" >>"$R/checks.tsv"
  ((status == 0)) || printf 'the packaging script\tfailed\n' >>"$R/checks.tsv"
  return "$status"
}

# The vm tier's guest is the appliance's rootfs with the test tools layered over it.
tier_vm() {
  batch appliance/debian/build.sh && batch images/build.sh rootfs && batch tests/vm/build-rootfs.sh >/dev/null ||
    return 1
  wait_for_quiet
  FULCRUM_JUNIT_DIR=$R tests/vm/run.sh
}

# The appliance image: build the .debs and the images, boot the qcow2, set it up, use it,
# upgrade it. The upgrade's packages (this tree, a higher version) build meanwhile, and the
# OVA (a conversion of the installed disk no test boots) while the tests run.
# (Not build.sh's own "check" stage: the acceptance tests boot the qcow2 anyway.)
tier_image() {
  batch appliance/debian/build.sh || return 1
  local version upgrade
  version=$(dpkg-deb -f "$(compgen -G 'images/.build/debs/fulcrum-api_*.deb' | head -n 1)" Version)
  FULCRUM_VERSION=$version+upgrade1 FULCRUM_DEB_OUT=$PWD/images/.build/upgrade-debs \
    batch appliance/debian/build.sh >"$LOGS/image-upgrade-debs.log" 2>&1 &
  upgrade=$!
  # rootfs and iso apart: the vm lane waits for the rootfs only.
  if ! batch images/build.sh rootfs || ! batch images/build.sh iso; then
    wait "$upgrade"
    return 1
  fi
  wait_for_quiet
  images/build.sh qcow2 || { wait "$upgrade"; return 1; }
  wait "$upgrade" || echo "the upgrade's packages did not build here (test_upgrade builds them again)"
  local ova status=0
  batch images/build.sh ova >"$LOGS/image-ova.log" 2>&1 &
  ova=$!
  pytest_junit image --durations=20 images/tests tests/vm/image || status=1
  check ova wait "$ova" || { echo "the OVA did not build: $LOGS/image-ova.log"; status=1; }
  return "$status"
}

# -- running them ------------------------------------------------------------------------------

T0=$SECONDS

# run_tier NAME [--show]: the tier, its output in its log (and on the console with --show),
# its line in tiers.tsv
run_tier() {
  local tier=$1 show=${2:-} start=$((SECONDS - T0)) status=0 result
  R=$RESULTS/$tier
  rm -rf "$R"
  mkdir -p "$R"
  echo "=== tier $tier ($(date +%T)) ==="
  if [[ -n $show ]]; then
    "tier_$tier" > >(tee "$LOGS/$tier.log") 2>&1 || status=$?
  else
    "tier_$tier" >"$LOGS/$tier.log" 2>&1 || status=$?
  fi
  result=$( ((status == 0)) && echo ok || echo FAILED)
  printf '%s\t%s\t%d\t%d\n' "$tier" "$result" "$start" "$((SECONDS - T0))" >>"$TSV"
  echo "=== tier $tier: $result in $((SECONDS - T0 - start)) s ($(date +%T)) ==="
  return "$status"
}

lane() {
  local tier show=$1 status=0
  shift
  for tier in "$@"; do run_tier "$tier" "$show" || status=1; done
  return "$status"
}

# Leave the private PostgreSQL as we found it: stop it at the end if this run started it.
pg_was_running=$(.venv/bin/python -c 'from tests.harness import pg; print(int(pg.running()))' 2>/dev/null || echo 0)
lane_pids=()
finish() {
  local pid
  for pid in "${lane_pids[@]}"; do kill -TERM -- "-$pid" 2>/dev/null; done
  rm -f "$QUIET"
  [ "$pg_was_running" = 1 ] || .venv/bin/python -m tests.harness.pg stop 2>/dev/null || true
}
trap finish EXIT
trap 'exit 130' INT TERM

# The arguments: tiers, in lanes separated by "+"; --all is every tier in three lanes.
args=("$@")
[[ ${1:-} != --all ]] || args=(netns lint unit api browser compose packaging + image + vm)
lanes=("")
for arg in "${args[@]}"; do
  if [[ $arg == + ]]; then
    lanes+=("")
    continue
  fi
  declare -F "tier_$arg" >/dev/null || { echo "unknown tier: $arg" >&2; exit 2; }
  lanes[-1]+=" $arg"
done
mkdir -p "$LOGS" "$RESULTS" "$ARTIFACTS/run"
: >"$TSV"
FULCRUM_LOAD_AT_START=$(cut -d' ' -f1-3 /proc/loadavg)
export FULCRUM_LOAD_AT_START
echo "load average at the start: $FULCRUM_LOAD_AT_START"
# Guests wait for the failover measurements when they would run beside them.
if ((${#lanes[@]} > 1)) && [[ " ${args[*]} " == *" netns "* ]]; then touch "$QUIET"; fi

failed=0
set -m # each background lane its own process group, so that an interrupt stops all of it
for extra in "${lanes[@]:1}"; do
  # shellcheck disable=SC2086 # the lane's tiers are words
  lane "" $extra &
  lane_pids+=($!)
done
set +m
# shellcheck disable=SC2086
lane --show ${lanes[0]} || failed=1
for pid in "${lane_pids[@]}"; do wait "$pid" || failed=1; done
lane_pids=()

echo "=== summary ==="
FULCRUM_RUN_SECONDS=$((SECONDS - T0)) .venv/bin/python -m tests.harness.tiers summary | tee "$ARTIFACTS/tiers.txt"
# A failed tier of a background lane: its log's end (the first lane's was shown as it came).
while IFS=$'\t' read -r tier result _; do
  [[ $result == ok || " ${lanes[0]} " == *" $tier "* ]] && continue
  echo "=== the $tier tier FAILED: the last 300 lines of $LOGS/$tier.log ==="
  tail -n 300 "$LOGS/$tier.log"
done <"$TSV"
exit $failed
