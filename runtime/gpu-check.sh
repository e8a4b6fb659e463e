#!/bin/sh
# The CUDA backend's check on a machine with a GPU (docs/runtime.md, "CUDA"):
# builds with CUDA, runs tests/test_cuda (the primitives against the CPU
# backend's, fp32), launches 1F1B, ZB-H1, ZB-V and PO-F of the default
# problem on the GPUs present (1 GPU emulates every device), with the
# gradient check in fp32, calibrates on the measured runs, launches again on
# the calibrated problem, and prints the table last: predicted
# (uncalibrated), calibrated prediction and measured step per schedule.
# Exits non-zero on the first failed step; where no GPU is visible it
# prints "no GPU" and exits 77 (automake's skip) before building anything.
# Run from the source tree:
#   sh runtime/gpu-check.sh
set -eu
cd "$(dirname "$0")/.."

gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
[ "$gpus" -ge 1 ] || { echo "no GPU"; exit 77; }

out=${GPU_CHECK_DIR:-gpu-check.out}
mkdir -p "$out"

step() { printf '== %s\n' "$*" >&2; }

step "build with CUDA"
[ -f Makefile ] || { autoreconf -fi >/dev/null && ./configure -q --with-cuda; }
grep -q '^#define HAVE_CUDA 1' config.h || { echo "gpu-check: this build has no CUDA" >&2; exit 1; }
make -j"$(nproc)" >/dev/null

step "$gpus GPU(s)"

step "correctness: tests/test_cuda"
make check TESTS=tests/test_cuda >/dev/null || { cat tests/test_cuda.log >&2; exit 1; }
grep -q 'SKIP' tests/test_cuda.log && { echo "gpu-check: test_cuda skipped with a GPU present" >&2; exit 1; }

# The default problem (gpt3-6.7b on 8 devices); the CPU backend's scaled
# workload for the fp32 gradient check (the sequential reference is
# computed too), the model's own widths with fewer tokens for the timed runs.
problem=examples/default.json
small=hidden=128,ffn=512,tokens=128
shape=hidden=4096,ffn=16384,tokens=1024
fams="1f1b zb-h1 zb-v po-f"
# The fp32 mode: the gradients against the sequential reference to 1e-5.
for f in $fams; do
	step "launch $f (fp32, gradients checked)"
	PW_CUDA_MATH=fp32 ./pipewright launch $problem --family "$f" \
	    --backend cuda --gpus "$gpus" --workload "$small" --iterations 3 --json \
	    -o "$out/$f.fp32.json" >"$out/$f.fp32.report.json"
done
# The default bf16 mode: the same check against bf16's bound, 1e-2.
step "launch 1f1b (bf16, gradients checked)"
./pipewright launch $problem --family 1f1b --backend cuda --gpus "$gpus" \
    --workload "$small" --iterations 3 --json >"$out/1f1b.bf16.report.json"
for f in $fams; do
	step "launch $f (bf16)"
	./pipewright launch $problem --family "$f" --backend cuda \
	    --gpus "$gpus" --workload "$shape" --iterations 5 --no-check --json \
	    -o "$out/$f.json" >"$out/$f.report.json"
done
step "calibrate"
./pipewright calibrate "$out"/1f1b.json "$out"/zb-h1.json "$out"/zb-v.json \
    "$out"/po-f.json -o "$out/calibrated.json"
for f in $fams; do
	step "launch $f on the calibrated problem"
	./pipewright launch "$out/calibrated.json" --family "$f" --backend cuda \
	    --gpus "$gpus" --workload "$shape" --iterations 5 --no-check --json \
	    >"$out/$f.cal.report.json"
done

python3 - "$out" $fams <<'PY'
import json, sys
out, fams = sys.argv[1], sys.argv[2:]
def cmp(p):
    return json.load(open(p))["against_predicted"]
print("%-8s %12s %12s %12s %8s" % ("schedule", "predicted", "calibrated", "measured", "meas/cal"))
for f in fams:
    u, c = cmp("%s/%s.report.json" % (out, f)), cmp("%s/%s.cal.report.json" % (out, f))
    print("%-8s %10.2f ms %10.2f ms %10.2f ms %8.3f" % (f, 1e3 * u["step_predicted"],
          1e3 * c["step_predicted"], 1e3 * c["step_measured"],
          c["step_measured"] / c["step_predicted"]))
PY
