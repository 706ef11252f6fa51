#!/bin/sh
# Build the compiled core with AddressSanitizer into a temporary copy of the source tree and run
# the fuzz harnesses (hostile model files, hostile inputs), the persistence tests and the
# non-finite-state guards under it once: any out-of-bounds access aborts with a report.
#     sh bench/sanitize.sh                     # those tests
#     sh bench/sanitize.sh tests/test_x.py ...   # or the tests given
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$here"
git ls-files -z | xargs -0 -I{} cp --parents {} "$work"
cd "$work"
if [ $# -eq 0 ]; then      # (not the reproductions: matplotlib's C++ exceptions trip ASan's
    set -- tests/test_load_fuzz.py tests/test_input_fuzz.py tests/test_persistence.py \
        tests/test_numeric_guard.py tests/test_vaw_guard.py tests/test_target_spikes.py \
        $(ls tests/test_pkawv_*.py | grep -v reproduce) tests/test_bandit_core.py
fi                        #  __cxa_throw interceptor when its font module imports)
CFLAGS="-fsanitize=address -fno-omit-frame-pointer -O1 -g" LDFLAGS="-fsanitize=address" \
    python setup.py build_ext --inplace -q >build.log 2>&1 || { tail -20 build.log; exit 1; }
for so in fastomkl/_core/*.so; do                # every extension really is instrumented
    ldd "$so" | grep -q libasan || { echo "$so is not linked with AddressSanitizer"; exit 1; }
done
echo "built with AddressSanitizer: $(ls fastomkl/_core/*.so | wc -l) extensions"
LD_PRELOAD=$(gcc -print-file-name=libasan.so) ASAN_OPTIONS=detect_leaks=0 PYTHONPATH="$work" \
    python -m pytest -q -p no:cacheprovider --capture=sys "$@"      # fd 2 free for a report
