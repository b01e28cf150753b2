# route-status-controller image: build on Debian bookworm with the same -dev
# packages as `make deps`, run on bookworm-slim with only the runtime libraries,
# as a non-root user.
#   docker build -t routestatus/route-status-controller:dev .

FROM debian:bookworm AS build
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      cmake make g++ pkg-config libssl-dev libcpprest-dev libyaml-cpp-dev \
      nlohmann-json3-dev prometheus-cpp-dev libcivetweb-dev libgoogle-glog-dev \
      libgtest-dev libgmock-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
# Only the binary: tests run in CI (`make test`), not in the image build.
RUN rm -rf build \
 && cmake -S . -B build -DCMAKE_BUILD_TYPE=Release \
 && cmake --build build -j"$(nproc)" --target route-status-controller \
 && strip build/cmd/route-status-controller/route-status-controller

FROM debian:bookworm-slim
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      ca-certificates libssl3 libcpprest2.10 libyaml-cpp0.7 \
      libprometheus-cpp-core1.0 libcivetweb1 libgoogle-glog0v6 \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 65532 nonroot \
 && useradd --system --uid 65532 --gid 65532 --no-create-home --shell /usr/sbin/nologin nonroot
COPY --from=build /src/build/cmd/route-status-controller/route-status-controller /usr/local/bin/
USER 65532:65532
EXPOSE 1936
ENTRYPOINT ["/usr/local/bin/route-status-controller"]
