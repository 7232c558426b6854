#!/bin/sh
# As the official redis image's entrypoint: flags alone go to redis-server, which runs as redis.
set -e
if [ "${1#-}" != "$1" ]; then set -- redis-server "$@"; fi
if [ "$1" = redis-server ]; then
  shift
  set -- redis-server --protected-mode no --bind '* -::*' --dir /data "$@"
  if [ "$(id -u)" = 0 ]; then exec setpriv --reuid=redis --regid=redis --init-groups "$@"; fi
fi
exec "$@"
