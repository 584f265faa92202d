#!/usr/bin/env bash
# Installs every build, test and benchmark dependency from Debian packages (run as root).
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config git xz-utils
  libcli11-dev nlohmann-json3-dev libspdlog-dev libfmt-dev libsqlite3-dev sqlite3
  libopenmpi-dev openmpi-bin libgtest-dev libgmock-dev libbenchmark-dev
  libdnnl-dev ocl-icd-opencl-dev libopenblas-dev libhdf5-dev libyaml-cpp-dev libcurl4-openssl-dev
  python3 python3-jmespath
  slurm-wlm munge
  libcpp-httplib-dev libboost-dev libssl-dev
  dpkg-dev fakeroot lintian systemd bash-completion man-db groff-base
  json-schema-test-suite
  azure-cli python3-azure libnss-myhostname
  chromium chromium-driver python3-selenium nodejs
  python3-torch
  podman runc uidmap mmdebstrap busybox-static
  iproute2 procps util-linux
)
if [ "${BATCHAI_SKIP_APT:-0}" != 1 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
fi
