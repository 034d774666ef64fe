#!/usr/bin/env bash
# Idempotent set-up of torch_ocl on a fresh Debian/Ubuntu machine (CI, a new GPU box):
#   1. the OpenCL ICD loader + headers, PoCL (an OpenCL driver for CPUs), CLBlast, clinfo,
#      installed with apt-get only when missing;
#   2. torch, only when it is not importable: a CPU build (an OpenCL user needs no CUDA);
#   3. the Python tools the tests and train.py use;
#   4. torch_ocl itself, as an editable install compiled against the installed torch.
# Re-running it is cheap: each step is skipped when its work is already done.
# Environment: PYTHON (default: the `python` the README commands run, else python3), MAX_JOBS
# (default 2), TORCH_OCL_TORCH_SPEC (default torch==2.13.0).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYTHON="${PYTHON:-$(command -v python || command -v python3)}"
export MAX_JOBS="${MAX_JOBS:-2}"
TORCH_SPEC="${TORCH_OCL_TORCH_SPEC:-torch==2.13.0}"

log() { printf '[setup] %s\n' "$*"; }

# ---- 1. system packages --------------------------------------------------------------
APT_PACKAGES=(ocl-icd-opencl-dev opencl-headers pocl-opencl-icd libclblast-dev clinfo)
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done
if ((${#missing[@]})); then
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
  log "installing system packages: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  log "system packages present"
fi

# ---- 2. torch (CPU build) ----------------------------------------------------------------
PIP=("$PYTHON" -m pip install --disable-pip-version-check -q)
if TORCH_DEVICE_BACKEND_AUTOLOAD=0 "$PYTHON" -c "import torch" 2>/dev/null; then
  log "torch $(TORCH_DEVICE_BACKEND_AUTOLOAD=0 "$PYTHON" -c 'import torch; print(torch.__version__)') present"
else
  # A CPU build only: "+cpu" from the configured indexes / local wheels first (what these
  # machines serve), else PyTorch's CPU index. Never PyPI's default CUDA build.
  log "installing $TORCH_SPEC (CPU build)"
  "${PIP[@]}" --only-binary=:all: "${TORCH_SPEC}+cpu" \
    || "${PIP[@]}" --only-binary=:all: --index-url https://download.pytorch.org/whl/cpu "$TORCH_SPEC"
fi

# ---- 3. Python tools ---------------------------------------------------------------------
TOOLS=(tqdm matplotlib tokenizers pytest pytest-xdist)
if "$PYTHON" -c "import tqdm, matplotlib, tokenizers, pytest, xdist" 2>/dev/null; then
  log "python tools present"
else
  log "installing ${TOOLS[*]}"
  "${PIP[@]}" "${TOOLS[@]}"
fi
# PEP 660 editable installs need a setuptools that builds wheels.
if ! "$PYTHON" -c "import setuptools, wheel, sys; sys.exit(int(setuptools.__version__.split('.')[0]) < 64)" 2>/dev/null; then
  "${PIP[@]}" "setuptools>=70" wheel
fi

# ---- 4. torch_ocl --------------------------------------------------------------------------
# --no-build-isolation: compile against the installed torch, never a different one fetched
# into an isolated build environment (the ABI and DeviceStats differ between versions).
if "$PYTHON" - <<'EOF' 2>/dev/null
import importlib.metadata as md, json, os, sys, urllib.parse
dist = md.distribution("torch_ocl")
here = os.path.realpath(".")
# The editable install must point at this checkout exactly: a substring test took an install
# of /other/work/main for one of /work/main.
url = json.loads(dist.read_text("direct_url.json") or "{}").get("url", "")
path = urllib.parse.unquote(urllib.parse.urlparse(url).path) if url.startswith("file://") else ""
built = [f for f in os.listdir("torch_ocl") if f.startswith("_C.") and f.endswith(".so")]
sys.exit(0 if path and os.path.realpath(path) == here and built else 1)
EOF
then
  log "torch_ocl installed (editable); refreshing the extension"
  TORCH_DEVICE_BACKEND_AUTOLOAD=0 "$PYTHON" setup.py -q build_ext --inplace
else
  # setup.py imports torch: an installed torch_ocl that cannot load (say, an editable install
  # of a checkout that was moved or deleted) must not stop this one from building.
  log "installing torch_ocl (pip install --no-build-isolation -e ., MAX_JOBS=$MAX_JOBS)"
  TORCH_DEVICE_BACKEND_AUTOLOAD=0 "${PIP[@]}" --no-build-isolation -e .
fi

# From / so that the installed package answers, not the checkout's directory on sys.path.
(cd / && TORCH_DEVICE_BACKEND_AUTOLOAD=1 "$PYTHON" -c "import torch; print('[setup] ocl devices:', torch.ocl.device_count(), '-', torch.ocl.get_device_name() if torch.ocl.is_available() else 'none')")
