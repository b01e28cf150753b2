# route-status-controller image: build on Debian bookworm with the same -dev
# packages as `make deps`, run on bookworm-slim with only the runtime libraries,
# as a non-root user. Both package lists live in deploy/image/ (one package a
# line), shared with `make deps`. `make image-check` builds it with podman
# and runs it as deploy/controller/deployment.yaml says (docs/image.md).
#   docker build -t routestatus/route-status-controller:dev .

FROM debian:bookworm AS build
COPY deploy/image/build-packages.txt /tmp/
RUN apt-get update -qq \
 && sed 's/#.*//' /tmp/build-packages.txt \
    | DEBIAN_FRONTEND=noninteractive xargs apt-get install -y -qq --no-install-recommends \
 && rm -rf /var/lib/apt/lists/* /tmp/build-packages.txt
WORKDIR /src
COPY . .
# Only the binary: tests run in CI (`make test`), not in the image build.
RUN rm -rf build \
 && cmake -S . -B build -DCMAKE_BUILD_TYPE=Release \
 && cmake --build build -j"$(nproc)" --target route-status-controller \
 && strip build/cmd/route-status-controller/route-status-controller

FROM debian:bookworm-slim
COPY deploy/image/runtime-packages.txt /tmp/
RUN apt-get update -qq \
 && sed 's/#.*//' /tmp/runtime-packages.txt \
    | DEBIAN_FRONTEND=noninteractive xargs apt-get install -y -qq --no-install-recommends \
 && apt-get clean \
 && rm -rf /var/lib/apt/lists/* /tmp/runtime-packages.txt \
 && groupadd --system --gid 65532 nonroot \
 && useradd --system --uid 65532 --gid 65532 --no-create-home --shell /usr/sbin/nologin nonroot
COPY --from=build /src/build/cmd/route-status-controller/route-status-controller /usr/local/bin/
USER 65532:65532
EXPOSE 1936
ENTRYPOINT ["/usr/local/bin/route-status-controller"]
