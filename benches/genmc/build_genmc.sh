#!/bin/sh
# Builds GenMC, the pinned release, from source with Debian's LLVM, into $1 (default
# /tmp/genmc): the peer `run.py` measures fgvt against. Needs the network (GitHub, Debian).
set -eu
dest=${1:-/tmp/genmc}
# GenMC v0.10.3: the newest release whose C++20 builds with Debian 12's g++ 12 and LLVM 14.
commit=c26195b35cc3508b803c0382bac5b4ed4c2233f5
apt-get install -y autoconf automake clang llvm-dev libffi-dev zlib1g-dev libedit-dev
if [ ! -d "$dest/.git" ]; then
    git clone https://github.com/MPI-SWS/genmc "$dest"
fi
cd "$dest"
git checkout --quiet "$commit"
autoreconf --install
./configure --with-llvm="$(llvm-config --prefix)"
make -j"$(nproc)"
echo "GenMC built: $dest/genmc"
