# syntax=docker/dockerfile:1
# collisiond in a container (docs/DEPLOY.md, "Container"). From the repository root:
#
#   docker build -t collisiond .
#   docker run --rm -p 127.0.0.1:7878:7878 -p 127.0.0.1:7879:7879 \
#       -v collisiond-data:/var/lib/collisiond collisiond
#
# Configure it with COLLISIOND_* environment variables (docs/API.md, section 9)
# rather than flags: the health check reads COLLISIOND_LISTEN to find the port.
#
# The labels' version comes from the VERSION file, their revision and date
# from the checkout (all optional; docs/DEPLOY.md, "Container"):
#
#   docker build --build-arg VERSION=$(cat VERSION) \
#       --build-arg REVISION=$(git rev-parse HEAD) \
#       --build-arg CREATED=$(date -u +%Y-%m-%dT%H:%M:%SZ) \
#       --build-arg SOURCE=$(git remote get-url origin) -t collisiond:$(cat VERSION) .

# The base image, pinned by digest (the multi-platform index, so every
# architecture resolves to the same release); the tag is kept for readers.
# Refresh: `docker buildx imagetools inspect debian:bookworm-slim` prints the
# current index digest ("Digest:"); replace it here, rebuild, run the tests.
ARG DEBIAN_IMAGE=debian:bookworm-slim@sha256:88200866dfff7ea7f5cbcb6ec7c8a701889efe6fe859fe64d6990e4b07ea4171

# Build stage: the compiler and the -dev packages, as `make deps` lists them
# (without the test and benchmark tools).
FROM ${DEBIAN_IMAGE} AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
        gcc libc6-dev make pkg-config python3 \
        libmicrohttpd-dev libjansson-dev libuv1-dev libmsgpuck-dev libjs-three \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# VERSION: the Makefile compiles the version in from it. mk/: its rules.
COPY Makefile VERSION ./
COPY mk mk
COPY core core
COPY proto proto
COPY server server
# The OpenAPI document is compiled into the binary.
COPY docs/openapi.json docs/openapi.json
COPY tools/embed_openapi.py tools/embed_openapi.py
# So is the web inspector (with three.js from libjs-three, above).
COPY inspector/embed.py inspector/embed.py
COPY inspector/www inspector/www
RUN make BUILD=build build/collisiond \
 && strip --strip-debug -o /collisiond build/collisiond

# Runtime stage: the three shared libraries the binary links, nothing else.
FROM ${DEBIAN_IMAGE}
ARG VERSION=unknown
ARG REVISION=unknown
ARG CREATED=unknown
ARG SOURCE=
ARG DEBIAN_IMAGE
LABEL org.opencontainers.image.title="collisiond" \
      org.opencontainers.image.description="Collision-query daemon: worlds of shapes, pair tests, contacts, ray casts and sweeps over HTTP/JSON and a JSON-lines stream" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}" \
      org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.licenses="MIT" \
      org.opencontainers.image.base.name="${DEBIAN_IMAGE}"
RUN apt-get update \
 && apt-get install -y --no-install-recommends libmicrohttpd12 libjansson4 libuv1 \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 collisiond \
 && useradd --system --uid 10001 --gid collisiond --home-dir /var/lib/collisiond \
        --no-create-home --shell /usr/sbin/nologin collisiond \
 && install -d -o collisiond -g collisiond -m 0750 /var/lib/collisiond
COPY --from=build /collisiond /usr/local/bin/collisiond
COPY LICENSE /usr/share/doc/collisiond/LICENSE
# Run through bash by the HEALTHCHECK: it works whatever mode the checkout gave it.
COPY deploy/docker-healthcheck.sh /usr/local/bin/collisiond-healthcheck

# Inside the container the listeners take every interface (the daemon's
# default outside a container stays loopback). The data directory is a
# subdirectory of the volume, so a volume's lost+found stays out of it.
ENV COLLISIOND_LISTEN=0.0.0.0:7878 \
    COLLISIOND_STREAM_LISTEN=0.0.0.0:7879 \
    COLLISIOND_DATA_DIR=/var/lib/collisiond/data
# Numeric, so Kubernetes' runAsNonRoot can verify it.
USER 10001:10001
WORKDIR /var/lib/collisiond
VOLUME ["/var/lib/collisiond"]
EXPOSE 7878 7879
# Liveness (/healthz), not readiness: an orchestrator that acts on an
# unhealthy container (Swarm replaces it, autoheal restarts it) must not
# kill a shard that is still replaying a long journal, and /healthz answers
# during recovery. Whoever needs "ready" asks for it: deploy/compose.yml
# overrides the test with `collisiond-healthcheck /readyz` for the router's
# depends_on; Kubernetes ignores HEALTHCHECK and has its own probes.
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
    CMD ["/bin/bash", "/usr/local/bin/collisiond-healthcheck", "/healthz"]
# SIGTERM drains: /readyz turns 503, in-flight requests finish, a snapshot is
# written. Exec form, so the daemon is PID 1 and receives it.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/collisiond"]
