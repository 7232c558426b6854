# The service's image: built on NODE_IMAGE (the official node:26-slim by default), it runs
# `node src/server.ts` on the image's own Node, as the user node, with the embedded database in the
# volume /data. Configuration and secrets come from the environment (docs/operations.md).
#
#   docker build -t task-portal .
#   docker run -p 3000:3000 -e SESSION_SECRET=... -v portal-data:/data task-portal
#
# Behind a proxy that re-signs TLS, or with a registry of your own, npm's CA bundle and registry
# are given to the build only (a secret and an argument) and stay out of the image:
#   docker build --secret id=npm_ca,src=/etc/ssl/certs/ca-certificates.crt \
#     --build-arg NPM_REGISTRY="$(npm config get registry)" -t task-portal .
ARG NODE_IMAGE=node:26-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
ARG NPM_REGISTRY=
COPY . .
# npm ci runs the package's `prepare` (npm run build: the portal and the embedded database
# template); the prune then leaves production packages only, without the optional pinned `node`
# package: the runtime below is the image's own Node. Source maps and type declarations are
# left behind (about 22 MB the running service never reads). The template's files (0600, like any
# PostgreSQL data directory) are made readable for the user that copies them into /data.
RUN --mount=type=secret,id=npm_ca,required=false \
    if [ -s /run/secrets/npm_ca ]; then export NPM_CONFIG_CAFILE=/run/secrets/npm_ca; fi \
 && if [ -n "$NPM_REGISTRY" ]; then export NPM_CONFIG_REGISTRY="$NPM_REGISTRY"; fi \
 && npm ci --no-audit --no-fund --loglevel=warn \
 && npm prune --omit=dev --omit=optional --no-audit --no-fund --loglevel=warn \
 && test ! -e node_modules/node && test ! -e node_modules/.bin/node \
 && rm -rf node_modules/.cache \
 && find node_modules -type f \( -name '*.map' -o -name '*.d.ts' -o -name '*.d.cts' -o -name '*.d.mts' \) -delete \
 && chmod -R a+rX dist web/dist

FROM ${NODE_IMAGE}
# The contract's defaults (section 7), but listening on every interface of the container, and the
# metrics listener reachable from a scraper beside it (publish its port on a private address only).
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    METRICS_HOST=0.0.0.0 \
    METRICS_PORT=9464 \
    DATA_DIR=/data \
    MALLOC_ARENA_MAX=1 \
    NODE_COMPILE_CACHE=/tmp/node-compile-cache
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/web/dist ./web/dist
COPY --from=build /app/src ./src
# A new volume takes the owner of its mount point from the image: the user node may write it.
RUN mkdir -p /data && chown node:node /data
VOLUME /data
USER node
EXPOSE 3000 9464
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT}/readyz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Node itself is PID 1: no shell or npm in between to swallow SIGTERM, on which the server
# finishes what it is answering and exits (within 10 s).
ENTRYPOINT []
CMD ["node", "--max-semi-space-size=4", "src/server.ts"]
