# damselfly: a Redis- and Memcached-compatible in-memory store.
#
#   docker build -t damselfly .
#   docker run -p 6379:6379 -p 11211:11211 damselfly [--flag=value ...]
#
# Flags come as arguments or as DAMSELFLY_<flag> environment variables (docs/flags.md).
# The memcached port (11211) is on by default. Under a container runtime's default
# seccomp profile io_uring is blocked; damselfly then runs on epoll and says so once.
# See docs/docker.md.

# --- build: the same release build as tools/run.sh
FROM debian:bookworm AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      build-essential cmake ninja-build pkg-config liburing-dev libboost-fiber-dev \
      libboost-context-dev libabsl-dev libmimalloc-dev libgoogle-glog-dev libgflags-dev \
      libssl-dev libgtest-dev libgmock-dev liblua5.1-0-dev lua-cjson-dev lua-bitop-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY CMakeLists.txt ./
COPY helio helio
COPY src src
COPY tools tools
RUN cmake -S . -B build-opt -G Ninja -DCMAKE_BUILD_TYPE=Release \
 && cmake --build build-opt --target damselfly \
 && strip build-opt/damselfly

# --- run: the binary and its runtime libraries only
FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      liburing2 libboost-fiber1.74.0 libboost-context1.74.0 libabsl20220623 libmimalloc2.0 \
      libgoogle-glog0v6 libgflags2.2 libssl3 liblua5.1-0 lua-cjson lua-bitop \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 999 --home-dir /data --shell /usr/sbin/nologin damselfly \
 && mkdir -p /data && chown damselfly:damselfly /data
COPY --from=build /src/build-opt/damselfly /usr/local/bin/damselfly
COPY tools/docker-healthcheck.sh /usr/local/bin/damselfly-healthcheck
ENV DAMSELFLY_memcached_port=11211 \
    DAMSELFLY_logtostderr=true
USER damselfly
WORKDIR /data
VOLUME /data
EXPOSE 6379 11211
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
  CMD ["/usr/local/bin/damselfly-healthcheck"]
ENTRYPOINT ["/usr/local/bin/damselfly"]
