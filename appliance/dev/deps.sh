#!/usr/bin/env bash
# Install what this repository needs on a Debian 12 (bookworm) host, idempotently: the Debian
# packages of appliance/dev/packages.txt for the groups asked for, then the Python venv and the
# console's npm packages. Fast when all is present.
#
#   appliance/dev/deps.sh [GROUP...]     groups: demo (the default), test, image
#
# `make deps` asks for demo, `make image` for demo and image, `make deps-test` (and so
# `make test`) for all three: every tool any tier uses is in place before the first tier runs.
set -euo pipefail
cd "$(dirname "$0")/../.."

readonly MANIFEST=appliance/dev/packages.txt
groups=("$@")
((${#groups[@]})) || groups=(demo)
for group in "${groups[@]}"; do
  grep -qE "^$group[[:space:]]" "$MANIFEST" || { echo "deps: no group '$group' in $MANIFEST" >&2; exit 2; }
done

# have ITEM: a program on the PATH, an absolute file, or module:NAME that python3 imports
have() {
  case $1 in
    /*) [ -e "$1" ] ;;
    module:*) python3 -c "import ${1#module:}" 2>/dev/null ;;
    *) command -v "$1" >/dev/null ;;
  esac
}

export PATH="$PATH:/usr/sbin:/sbin:/usr/local/go/bin"
missing=()
while read -r group package provides; do
  [[ -n $group && $group != \#* && " ${groups[*]} " == *" $group "* ]] || continue
  for item in ${provides%%#*}; do
    if ! have "$item"; then missing+=("$package"); break; fi
  done
done <"$MANIFEST"
# python3 must be Debian's when it is missing altogether: its venv module comes with it.
command -v python3 >/dev/null || missing+=(python3 python3-venv)

if [ ${#missing[@]} -gt 0 ]; then
  mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
  echo "deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get -q update
  apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends "${missing[@]}"
fi
# Debian starts these on install; Fulcrum runs its own instances.
if command -v systemctl >/dev/null; then
  for unit in haproxy keepalived nginx postgresql; do
    systemctl disable --now "$unit" >/dev/null 2>&1 || true
  done
fi

# Toolchains: Debian 12's own Go (1.19) and Node (18) are too old for agents/ and webui/.
need_version() {  # need_version NAME HAVE WANT
  if [ "$(printf '%s\n%s\n' "$3" "$2" | sort -V | head -n1)" != "$3" ]; then
    echo "deps: $1 $2 is too old: Fulcrum needs $1 >= $3 (install it from upstream or Debian trixie)" >&2
    exit 1
  fi
}
command -v go >/dev/null || { echo "deps: Go is not on the PATH: Fulcrum needs Go >= 1.24" >&2; exit 1; }
command -v node >/dev/null || { echo "deps: Node.js is not on the PATH: Fulcrum needs Node.js >= 20.19" >&2; exit 1; }
need_version go "$(go env GOVERSION | sed 's/^go//')" 1.24
need_version node "$(node --version | sed 's/^v//')" 20.19

# Python: one venv for the API and the tests, rebuilt when the requirements change.
stamp=.venv/.requirements.sha256
want=$(cat requirements-dev.txt api/requirements.txt | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "deps: the Python venv (.venv) with the API's and the tests' packages (about 30 s the first time)"
  python3 -m venv .venv
  .venv/bin/pip install -q --upgrade pip
  .venv/bin/pip install -q -r requirements-dev.txt
  echo "$want" > "$stamp"
fi

# Console: npm ci when the lock file changes. Browsers come from Debian, never from npm.
stamp=webui/node_modules/.lock.sha256
want=$(sha256sum webui/package-lock.json | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "deps: the console's npm packages (npm ci)"
  (cd webui && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
  echo "$want" > "$stamp"
fi
echo "deps: ready"
