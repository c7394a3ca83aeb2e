# syntax=docker/dockerfile:1
# fluxsim with the kustomize Flux pins and the helm helm-controller links (versions.env:
# KUSTOMIZE, HELM), and the Flux Operator's CLI (v0.59.0, which renders ResourceSets) beside
# it, on a distroless base. git comes along: fluxsim reads revisions with it.
#
#   docker run --rm -v "$PWD:/repo" ghcr.io/fluxsim/fluxsim prove --base origin/main

# kustomize, helm and flux-operator, built with `go install` (static: no cgo).
FROM golang:1.26-bookworm AS tools
ENV CGO_ENABLED=0 GOBIN=/out
COPY versions.env /versions.env
# helm's Makefile sets its version with -ldflags; `go install` alone reports `v4.2`.
RUN . /versions.env \
 && go install "sigs.k8s.io/kustomize/kustomize/v5@$KUSTOMIZE" \
 && go install -ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=$HELM" \
      "helm.sh/helm/v4/cmd/helm@$HELM"
# The flux-operator module needs Go 1.27 (fetched from the module proxy); `go install` names
# its CLI `cli`.
RUN GOTOOLCHAIN=go1.27.3 GOBIN=/tmp/operator go install -ldflags "-s -w -X main.VERSION=0.59.0" \
      github.com/controlplaneio-fluxcd/flux-operator/cmd/cli@v0.59.0 \
 && mv /tmp/operator/cli /out/flux-operator

# fluxsim, static (musl).
FROM rust:1-alpine AS build
RUN apk add --no-cache musl-dev
WORKDIR /src
COPY . .
RUN cargo build --locked --profile dist && cp target/dist/fluxsim /fluxsim

# git and the shared libraries it links, to lay over the distroless base (which has glibc).
FROM debian:bookworm-slim AS git
RUN apt-get update \
 && apt-get install -y --no-install-recommends git \
 && mkdir /out \
 && cp --parents /usr/bin/git $(ldd /usr/bin/git | awk '/=>/ { print $3 }') /out/

FROM gcr.io/distroless/base-debian12:nonroot
COPY --from=git /out/ /
COPY --from=tools /out/kustomize /out/helm /out/flux-operator /usr/local/bin/
COPY --from=build /fluxsim /usr/local/bin/fluxsim
# A mounted repository belongs to another user than the image's: git must still read it.
ENV GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=safe.directory GIT_CONFIG_VALUE_0=* \
    FLUXSIM_CACHE_DIR=/tmp/fluxsim-cache
WORKDIR /repo
ENTRYPOINT ["/usr/local/bin/fluxsim"]
