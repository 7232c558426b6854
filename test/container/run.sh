#!/usr/bin/env bash
# The image and the fleet, tested for real with podman: build the Dockerfile, run the image on its
# embedded database (sign in, reassign, 429, SIGTERM, restart on the same volume), then bring up
# compose.yaml (nginx, two instances, Redis, PostgreSQL) and check it from outside. Everything it
# starts is removed on exit, also when a step fails.
#
# No image registry is reachable here, so the base images are made from Debian's packages
# (debootstrap) with the pinned Node binary and passed through NODE_IMAGE and the compose file's
# image variables; users get the official images. Run as root: `test/container/run.sh` (CI does).
# CONTAINER_TEST_CACHE (default /var/cache/task-portal-ci) keeps the base images' root file system
# between runs; the images themselves stay in podman's storage, named after what they hold.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
HERE=$ROOT/test/container

CACHE=${CONTAINER_TEST_CACHE:-/var/cache/task-portal-ci}
NODE_BIN=$ROOT/node_modules/node/bin/node
NODE_VERSION=$("$NODE_BIN" --version)
NPM_DIR=$(npm root -g)/npm
NPM_VERSION=$(npm --version)
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}

started=$(date +%s)
log() { printf '\n[container %3ss] %s\n' "$(($(date +%s) - started))" "$*" >&2; }
fail() {
  printf 'FAILED: %s\n' "$*" >&2
  exit 1
}

for tool in podman podman-compose runc debootstrap; do
  command -v "$tool" >/dev/null || fail "$tool is not installed (Debian packages podman, podman-compose, runc, debootstrap)"
done
[ -x /usr/bin/chromium-headless-shell ] || fail 'Chromium is not installed (Debian package chromium-headless-shell): a browser signs in through the fleet'
[ "$(id -u)" = 0 ] || fail 'podman with runc and cgroupfs needs root here'

# Everything of this run: a private folder, a name prefix for containers, volumes and the network.
RUN_ID=tpci$$
work=$(mktemp -d)
mkdir -p "$CACHE"
# Debian's podman 4.3 as measured on these machines: runc (crun refuses the cgroup layout),
# cgroupfs, and no default ulimits (raising RLIMIT_NOFILE is not permitted here).
cat >"$work/containers.conf" <<'EOF'
[containers]
default_ulimits = []
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
EOF
export CONTAINERS_CONF=$work/containers.conf

# --- base images ---------------------------------------------------------------------------------

# Debian bookworm (minbase) with libatomic1 (Node needs it), as a tar without docs, man pages and
# apt's lists; made once per cache folder (about a minute, more on a busy machine).
base_rootfs() {
  local tar=$CACHE/bookworm-minbase.tar
  if [ ! -s "$tar" ]; then
    log "debootstrap --variant=minbase bookworm (cached in $CACHE)"
    local dir=$work/rootfs
    debootstrap --variant=minbase --include=libatomic1 bookworm "$dir" "$MIRROR" >"$work/debootstrap.log" 2>&1 ||
      {
        tail -n 20 "$work/debootstrap.log"
        fail debootstrap
      }
    tar -C "$dir" --numeric-owner \
      --exclude=./usr/share/doc/* --exclude=./usr/share/man/* --exclude=./usr/share/info/* --exclude=./usr/share/locale/* \
      --exclude=./var/cache/apt/archives/*.deb --exclude=./var/cache/apt/*.bin \
      --exclude=./var/lib/apt/lists/* -cf "$tar.partial" .
    mv "$tar.partial" "$tar"
    rm -rf "$dir"
  fi
  printf '%s' "$tar"
}

image_exists() { podman image exists "$1"; }

# localhost/task-portal-ci/<name>:<tag>, built from images/<name>.Containerfile when absent.
BASE_IMAGE=localhost/task-portal-ci/bookworm-minbase:1
ensure_base() {
  image_exists "$BASE_IMAGE" && return
  local tar
  tar=$(base_rootfs)
  log "podman import $BASE_IMAGE"
  podman import --change 'CMD ["bash"]' "$tar" "$BASE_IMAGE" >/dev/null
}

# The tag ends with a hash of the image's files, so a change to them makes a new image.
build_standin() {
  local name=$1 tag=$2 context=$3
  tag=$tag-$(cat "$HERE/images/$name".* "$HERE/images/$name"-* 2>/dev/null | sha256sum | cut -c1-12)
  local image=localhost/task-portal-ci/$name:$tag
  if ! image_exists "$image"; then
    ensure_base
    log "building the stand-in $image"
    podman build --quiet --network host --format docker --build-arg "BASE=$BASE_IMAGE" \
      -f "$HERE/images/$name.Containerfile" -t "$image" "$context" >/dev/null
  fi
  printf '%s' "$image"
}

node_image() {
  local context=$work/node-context
  mkdir -p "$context"
  cp "$NODE_BIN" "$context/node"
  cp -r "$NPM_DIR" "$context/npm"
  build_standin node "${NODE_VERSION#v}-npm$NPM_VERSION" "$context"
}

# --- teardown, whatever happened ------------------------------------------------------------------

APP_IMAGE=localhost/task-portal-ci/app:$RUN_ID
PROJECT=$RUN_ID
compose() { podman-compose -p "$PROJECT" -f "$ROOT/compose.yaml" "$@"; }
cleanup() {
  local status=$?
  set +e
  if [ "$status" != 0 ]; then
    for container in $(podman ps -aq --filter "label=task-portal-ci=$RUN_ID") \
      $(podman ps -aq --filter "label=io.podman.compose.project=$PROJECT"); do
      echo "--- logs of $(podman inspect --format '{{.Name}}' "$container")" >&2
      podman logs --tail 30 "$container" >&2
    done
  fi
  # Containers with their anonymous volumes (the image's /data) first, then the rest of the fleet.
  for label in "task-portal-ci=$RUN_ID" "io.podman.compose.project=$PROJECT"; do
    podman ps -aq --filter "label=$label" | xargs -r podman rm -f -v -t 0 >/dev/null 2>&1
  done
  compose down -v >/dev/null 2>&1
  for label in "task-portal-ci=$RUN_ID" "io.podman.compose.project=$PROJECT"; do
    podman volume ls -q --filter "label=$label" | xargs -r podman volume rm -f >/dev/null 2>&1
  done
  podman network rm -f "${PROJECT}_default" >/dev/null 2>&1
  podman rmi -f "$APP_IMAGE" >/dev/null 2>&1
  rm -rf "$work"
  log "container tests $([ "$status" = 0 ] && echo passed || echo FAILED) in $(($(date +%s) - started)) s"
  exit "$status"
}
trap cleanup EXIT

free_port() { "$NODE_BIN" -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }
probe() { "$NODE_BIN" "$HERE/probe.ts" "$@"; }
SECRET=container-test-secret-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')

# Waits until `podman healthcheck run` calls the container healthy (no systemd here to run the
# checks on a timer, so the test runs them).
healthy() {
  local container=$1 tries=${2:-60}
  for _ in $(seq "$tries"); do
    if podman healthcheck run "$container" >/dev/null 2>&1; then return 0; fi
    sleep 1
  done
  fail "$container did not become healthy"
}

# --- the image ------------------------------------------------------------------------------------

NODE_IMAGE=$(node_image)
CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt
REGISTRY=$(npm config get registry)
if [ -n "${CONTAINER_TEST_IMAGE:-}" ]; then
  # An image built before (e.g. while working on the tests): tagged for this run, left in place.
  podman tag "$CONTAINER_TEST_IMAGE" "$APP_IMAGE"
else
  log "podman build -t $APP_IMAGE (NODE_IMAGE=$NODE_IMAGE, npm registry $REGISTRY)"
  build_started=$(date +%s)
  podman build --network host --format docker --layers=false \
    --build-arg "NODE_IMAGE=$NODE_IMAGE" --build-arg "NPM_REGISTRY=$REGISTRY" \
    --secret "id=npm_ca,src=$CA_BUNDLE" -t "$APP_IMAGE" "$ROOT" >"$work/build.log" 2>&1 ||
    {
      tail -n 40 "$work/build.log"
      fail 'podman build'
    }
  log "image built in $(($(date +%s) - build_started)) s"
fi
size=$(podman image inspect --format '{{.Size}}' "$APP_IMAGE")
base_size=$(podman image inspect --format '{{.Size}}' "$NODE_IMAGE")
log "image size: $((size / 1000000)) MB ($((base_size / 1000000)) MB of it the base image)"
[ "$size" -le 350000000 ] || fail "the image is $((size / 1000000)) MB, over 350 MB"

# The image: one Node (the base image's), nothing of the build's npm settings, a healthcheck.
in_image() { podman run --rm --no-healthcheck --label "task-portal-ci=$RUN_ID" --entrypoint sh "$APP_IMAGE" -c "$1"; }
runtimes=$(in_image 'find / -xdev -type f -size +20M -perm -u+x 2>/dev/null || true')
[ "$runtimes" = /usr/local/bin/node ] || fail "expected one Node runtime (/usr/local/bin/node), found: $runtimes"
in_image 'test ! -e node_modules/node && test ! -e /run/secrets/npm_ca && test ! -e .npmrc && test ! -e ~/.npmrc' ||
  fail 'the pinned node package, the CA bundle or an .npmrc is in the image'
if podman image inspect --format '{{.Config.Env}} {{json .Config.Labels}}' "$APP_IMAGE" | grep -qi 'npm_config\|npm_registry\|npm_ca'; then
  fail "npm's build settings are in the image's configuration"
fi
podman image inspect --format '{{json .Config.Healthcheck}}' "$APP_IMAGE" | grep -q readyz ||
  fail 'the image has no HEALTHCHECK on /readyz'

# --- one container on the embedded database -------------------------------------------------------

port=$(free_port)
metrics_port=$(free_port)
VOLUME=$RUN_ID-data
start_app() {
  podman run -d --name "$RUN_ID-app" --label "task-portal-ci=$RUN_ID" \
    -p "127.0.0.1:$port:3000" -p "127.0.0.1:$metrics_port:9464" \
    -e "SESSION_SECRET=$SECRET" -e PASSWORD_HASH_COST=1024 -e SEED_DEMO=true -v "$VOLUME:/data" "$APP_IMAGE" >/dev/null
}
log 'podman run: the image on its embedded database, in the volume /data'
podman volume create --label "task-portal-ci=$RUN_ID" "$VOLUME" >/dev/null
start_app
reassigned=$(probe first-start "http://127.0.0.1:$port")
echo "signed in, reassigned $reassigned, then 429 TASK_BULK_RATE_LIMIT"
healthy "$RUN_ID-app"
echo 'HEALTHCHECK: healthy'
[ "$(podman exec "$RUN_ID-app" id -u)" != 0 ] || fail 'the process runs as root'
pid1=$(podman exec "$RUN_ID-app" sh -c 'tr "\0" " " </proc/1/cmdline; echo; grep "^Uid:" /proc/1/status')
case "$pid1" in
  'node --max-semi-space-size=4 src/server.ts '*'Uid:'*1000*) echo "PID 1: $pid1" | tr '\n\t' '  ' && echo ;;
  *) fail "PID 1 is not the server as the user node: $pid1" ;;
esac
# The page is read whole before it is searched: grep -q stops reading at the first match, and
# curl, writing the rest into a closed pipe, would fail the pipeline (curl: (23)).
metrics_page=$(curl -fsS "http://127.0.0.1:$metrics_port/metrics") ||
  fail 'the metrics listener did not answer on METRICS_PORT'
grep -q '^# TYPE http_requests_total counter' <<<"$metrics_page" ||
  fail 'the metrics page lacks http_requests_total'
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/metrics")" = 404 ] ||
  fail '/metrics answered on the public port'

log 'podman stop (SIGTERM, 10 s before SIGKILL)'
stop_started=$(date +%s%N)
podman stop -t 10 "$RUN_ID-app" >/dev/null
stop_ms=$((($(date +%s%N) - stop_started) / 1000000))
exit_code=$(podman inspect --format '{{.State.ExitCode}}' "$RUN_ID-app")
echo "stopped in $stop_ms ms, exit code $exit_code"
# Where the time went: the server's 'shutting down' line (pino's epoch ms) and the exit.
logged=$(podman logs "$RUN_ID-app" 2>&1 | grep 'shutting down' | grep -o '"time":[0-9]*' | cut -d: -f2 || true)
finished=$(date -d "$(podman inspect --format '{{.State.FinishedAt}}' "$RUN_ID-app" | sed 's/ UTC$//')" +%s%3N || true)
[ -n "$logged" ] && [ -n "$finished" ] || fail 'no shutdown line in the log, or no exit time'
echo "  SIGTERM sent → 'shutting down' logged: $((logged - stop_started / 1000000)) ms; → process exited: $((finished - logged)) ms"
# The process's own stop, not podman's bookkeeping after it (seconds on a busy machine).
[ $((finished - stop_started / 1000000)) -lt 10000 ] || fail "the server exited $((finished - stop_started / 1000000)) ms after SIGTERM"
[ "$exit_code" = 0 ] || fail "exit code $exit_code after SIGTERM (137: killed after 10 s)"

log 'the same volume, a new container'
podman rm "$RUN_ID-app" >/dev/null
start_app
probe after-restart "http://127.0.0.1:$port" "$reassigned"
podman rm -f -t 0 "$RUN_ID-app" >/dev/null

# --- the fleet: compose.yaml ------------------------------------------------------------------------

REDIS_IMAGE=$(build_standin redis bookworm "$HERE/images")
POSTGRES_IMAGE=$(build_standin postgres bookworm "$HERE/images")
NGINX_IMAGE=$(build_standin nginx bookworm "$HERE/images")
PORTAL_PORT=$(free_port)
METRICS_PORT_1=$(free_port)
METRICS_PORT_2=$(free_port)
# A Redis command may wait longer than the default 100 ms on a busy CI machine: past it, an
# instance falls back to its own budgets (RATE_LIMIT_STORE_FAILURE=local), and the fleet's
# shared budget is not what would be tested.
REDIS_COMMAND_TIMEOUT_MS=2000
# The probes sign in as the demo accounts: the fleet seeds them only when asked.
SEED_DEMO=true
# compose.yaml has no default database password; the browser comes to the published port.
POSTGRES_PASSWORD=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
PUBLIC_ORIGIN=http://127.0.0.1:$PORTAL_PORT
export SEED_DEMO SESSION_SECRET=$SECRET TASK_PORTAL_IMAGE=$APP_IMAGE NODE_IMAGE REDIS_IMAGE POSTGRES_IMAGE NGINX_IMAGE \
  PORTAL_PORT METRICS_PORT_1 METRICS_PORT_2 REDIS_COMMAND_TIMEOUT_MS POSTGRES_PASSWORD PUBLIC_ORIGIN

log "podman-compose up (project $PROJECT)"
# Debian's podman-compose (1.0.3) starts services in dependency order but does not wait for
# `condition: service_healthy`: bring the stores up and wait for their healthchecks first, as
# docker compose does by itself.
compose up -d postgres redis >"$work/compose.log" 2>&1 || {
  cat "$work/compose.log"
  fail 'podman-compose up postgres redis'
}
healthy "${PROJECT}_postgres_1"
healthy "${PROJECT}_redis_1"
# The fleet's services by name: Debian's podman-compose knows no profiles, and would start the
# `monitoring` profile's Prometheus too (an official image, which no registry here serves).
compose up -d nginx api-1 api-2 postgres redis >>"$work/compose.log" 2>&1 || {
  cat "$work/compose.log"
  fail 'podman-compose up'
}
healthy "${PROJECT}_api-1_1" 90
healthy "${PROJECT}_api-2_1" 90
healthy "${PROJECT}_nginx_1"
# Redis runs with the limit and the policy compose.yaml gives it.
[ "$(podman exec "${PROJECT}_redis_1" redis-cli config get maxmemory-policy | tail -n 1)" = noeviction ] ||
  fail "Redis's maxmemory-policy is not noeviction"
[ "$(podman exec "${PROJECT}_redis_1" redis-cli config get maxmemory | tail -n 1)" -gt 0 ] ||
  fail 'Redis has no maxmemory'
podman ps --filter "label=io.podman.compose.project=$PROJECT" --format '{{.Names}}  {{.Image}}  {{.Status}}'

# A browser at the published port, whose Origin carries that port (nginx must pass it on).
probe browser "http://127.0.0.1:$PORTAL_PORT"
probe fleet "http://127.0.0.1:$PORTAL_PORT" "http://127.0.0.1:$METRICS_PORT_1" "http://127.0.0.1:$METRICS_PORT_2" \
  "${PROJECT}_api-1_1" "${PROJECT}_api-2_1"
podman run --rm --label "task-portal-ci=$RUN_ID" --network "${PROJECT}_default" \
  -v "$HERE/probe.ts:/probe.ts:ro" "$NODE_IMAGE" node /probe.ts own-bucket http://nginx

# The metrics ports are published on the loopback only.
for metrics in "$METRICS_PORT_1" "$METRICS_PORT_2"; do
  bindings=$(podman port "${PROJECT}_api-$([ "$metrics" = "$METRICS_PORT_1" ] && echo 1 || echo 2)_1" 9464)
  [ "$bindings" = "127.0.0.1:$metrics" ] || fail "the metrics port is published on $bindings"
done
other_address=$(hostname -I | awk '{print $1}')
if [ -n "$other_address" ] && curl -s -m 3 -o /dev/null "http://$other_address:$METRICS_PORT_1/metrics"; then
  fail "the metrics port answers on $other_address"
fi
echo "metrics ports published on 127.0.0.1 only"
