#!/usr/bin/env bash
# Install what `make demo` and `make test` need on Debian 12 (bookworm), idempotently:
# Debian packages, the Python venv, the console's npm packages. Fast when all is present.
#
#   appliance/dev/deps.sh [--with-test]    (--with-test adds Chromium, QEMU, debootstrap, wrk, httperf)
set -euo pipefail
cd "$(dirname "$0")/../.."

with_test=0
[ "${1:-}" = "--with-test" ] && with_test=1

# command -> Debian package
packages=(
  haproxy:haproxy
  keepalived:keepalived
  ipvsadm:ipvsadm
  nginx:nginx-light
  curl:curl
  ping:iputils-ping  # ping health checks (HAProxy external check)
  openssl:openssl
  ip:iproute2
  ps:procps
  runuser:util-linux
  make:make
  psql:postgresql-client
  /usr/lib/postgresql/15/bin/initdb:postgresql
)
if [ "$with_test" = 1 ]; then
  packages+=(
    chromium:chromium
    wrk:wrk
    httperf:httperf  # the DLLC benchmark (seed 002), as the study measured
    nft:nftables  # the HA tests cut VRRP between two balancers (tests/harness/halab.py)
    gcc:gcc  # the host test of ip_vs_dllc's selection maths (unit tier)
    qemu-system-x86_64:qemu-system-x86
    qemu-img:qemu-utils
    debootstrap:debootstrap
    mkfs.ext4:e2fsprogs
  )
fi

missing=()
for entry in "${packages[@]}"; do
  cmd=${entry%%:*} pkg=${entry#*:}
  if [[ $cmd == /* ]]; then [ -x "$cmd" ] || missing+=("$pkg"); else command -v "$cmd" >/dev/null || missing+=("$pkg"); fi
done
command -v python3 >/dev/null || missing+=(python3 python3-venv)
command -v go >/dev/null || [ -x /usr/local/go/bin/go ] || missing+=(golang-go)
command -v node >/dev/null || missing+=(nodejs npm)

if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
# Debian starts these on install; Fulcrum runs its own instances.
for unit in haproxy keepalived nginx postgresql; do
  systemctl disable --now "$unit" >/dev/null 2>&1 || true
done

# Toolchains: Debian 12's own Go (1.19) and Node (18) are too old for agents/ and webui/.
export PATH="$PATH:/usr/local/go/bin"
need_version() {  # need_version NAME HAVE WANT
  if [ "$(printf '%s\n%s\n' "$3" "$2" | sort -V | head -n1)" != "$3" ]; then
    echo "deps: $1 $2 is too old: Fulcrum needs $1 >= $3 (install it from upstream or Debian trixie)" >&2
    exit 1
  fi
}
need_version go "$(go env GOVERSION | sed 's/^go//')" 1.24
need_version node "$(node --version | sed 's/^v//')" 20.19

# Python: one venv for the API and the tests, rebuilt when the requirements change.
stamp=.venv/.requirements.sha256
want=$(cat requirements-dev.txt api/requirements.txt | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  python3 -m venv .venv
  .venv/bin/pip install -q --upgrade pip
  .venv/bin/pip install -q -r requirements-dev.txt
  echo "$want" > "$stamp"
fi

# Console: npm ci when the lock file changes. Browsers come from Debian, never from npm.
stamp=webui/node_modules/.lock.sha256
want=$(sha256sum webui/package-lock.json | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  (cd webui && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
  echo "$want" > "$stamp"
fi
echo "deps: ready"
