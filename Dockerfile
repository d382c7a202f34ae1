# syntax=docker/dockerfile:1
# collisiond in a container (docs/DEPLOY.md, "Container"). From the repository root:
#
#   docker build -t collisiond .
#   docker run --rm -p 127.0.0.1:7878:7878 -p 127.0.0.1:7879:7879 \
#       -v collisiond-data:/var/lib/collisiond collisiond
#
# Configure it with COLLISIOND_* environment variables (docs/API.md, section 9)
# rather than flags: the health check reads COLLISIOND_LISTEN to find the port.

ARG DEBIAN_IMAGE=debian:bookworm-slim

# Build stage: the compiler and the -dev packages, as `make deps` lists them
# (without the test and benchmark tools).
FROM ${DEBIAN_IMAGE} AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
        gcc libc6-dev make pkg-config python3 \
        libmicrohttpd-dev libjansson-dev libuv1-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Makefile ./
COPY core core
COPY proto proto
COPY server server
# The OpenAPI document is compiled into the binary.
COPY docs/openapi.json docs/openapi.json
RUN make BUILD=build build/collisiond \
 && strip --strip-debug -o /collisiond build/collisiond

# Runtime stage: the three shared libraries the binary links, nothing else.
FROM ${DEBIAN_IMAGE}
RUN apt-get update \
 && apt-get install -y --no-install-recommends libmicrohttpd12 libjansson4 libuv1 \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 collisiond \
 && useradd --system --uid 10001 --gid collisiond --home-dir /var/lib/collisiond \
        --no-create-home --shell /usr/sbin/nologin collisiond \
 && install -d -o collisiond -g collisiond -m 0750 /var/lib/collisiond
COPY --from=build /collisiond /usr/local/bin/collisiond
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
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
    CMD ["/bin/bash", "/usr/local/bin/collisiond-healthcheck"]
# SIGTERM drains: /readyz turns 503, in-flight requests finish, a snapshot is
# written. Exec form, so the daemon is PID 1 and receives it.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/collisiond"]
