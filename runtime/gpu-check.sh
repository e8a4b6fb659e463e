#!/bin/sh
# The CUDA backend's check on a machine with a GPU (docs/runtime.md, "CUDA"):
# builds with CUDA, runs tests/test_cuda (the primitives against the CPU
# backend's, fp32), measures the GPU's copy bandwidth and bf16 GEMM rate
# beside the hardware preset's (bench/bench_cuda), launches 1F1B, ZB-H1,
# ZB-V and PO-F of the default problem on the GPUs present (1 GPU emulates
# every device), with the gradient check in fp32, calibrates on the
# measured runs, launches again on the calibrated problem, re-optimizes it
# (solve) and launches the result, runs PO-F's compute orders without its
# offloads, and prints the table last: predicted (uncalibrated),
# calibrated prediction and measured step per schedule, and PO-F's offload
# slowdown.
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

# The preset the figures stand beside, by the first GPU's name.
case $(nvidia-smi -L | head -1) in
*H200*) preset=H200 ;;
*H100*) preset=H100-SXM ;;
*A100*) preset=A100-80GB ;;
*) preset=H200 ;;
esac
step "bandwidth and GEMM rate against the $preset preset"
make bench/bench_cuda >/dev/null
./bench/bench_cuda "$preset" | tee "$out/bench_cuda.txt"

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
# Each run calibrates its own problem: the families that split the model
# again (zb-v: 16 stages, po-f: 32) ran problems of other shapes.
for f in $fams; do
	step "calibrate on $f's run, launch $f on the calibrated problem"
	./pipewright calibrate "$out/$f.json" -o "$out/$f.calibrated.json"
	./pipewright launch "$out/$f.calibrated.json" --family "$f" \
	    --backend cuda --gpus "$gpus" --workload "$shape" --iterations 5 \
	    --no-check --json >"$out/$f.cal.report.json"
done
step "re-optimize 1f1b's calibrated problem (solve, 20 s) and launch it"
./pipewright solve "$out/1f1b.calibrated.json" --time-limit 20 \
    -o "$out/solved.json"
./pipewright launch "$out/solved.json" --backend cuda --gpus "$gpus" \
    --workload "$shape" --iterations 5 --no-check --json \
    >"$out/solved.cal.report.json"

# PO-F's compute orders without its offloads and reloads: what offloading
# costs is the step it adds to the same orders.
step "po-f's orders without offload"
python3 - "$out/po-f.json" "$out/po-f.nooff.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d.pop("measured", None)
d["ops"] = [o for o in d["ops"] if o["kind"] not in ("OFFLOAD", "RELOAD")]
json.dump(d, open(sys.argv[2], "w"))
PY
./pipewright launch "$out/po-f.nooff.json" --backend cuda --gpus "$gpus" \
    --workload "$shape" --iterations 5 --no-check --json \
    >"$out/po-f.nooff.report.json"

python3 - "$out" $fams <<'PY'
import json, sys
out, fams = sys.argv[1], sys.argv[2:]
def cmp(name):
    return json.load(open("%s/%s.json" % (out, name)))["against_predicted"]
print("%-8s %12s %12s %12s %8s" % ("schedule", "predicted", "calibrated", "measured", "meas/cal"))
for f in fams + ["solved"]:
    c = cmp(f + ".cal.report")
    u = "%10.2f ms" % (1e3 * cmp(f + ".report")["step_predicted"]) if f != "solved" else "%13s" % "-"
    print("%-8s %s %10.2f ms %10.2f ms %8.3f" % (f, u, 1e3 * c["step_predicted"],
          1e3 * c["step_measured"], c["step_measured"] / c["step_predicted"]))
on, off = cmp("po-f.report")["step_measured"], cmp("po-f.nooff.report")["step_measured"]
print("po-f offload slowdown: %.2f ms with offload, %.2f ms without: %+.2f%%" %
      (1e3 * on, 1e3 * off, 100 * (on / off - 1)))
PY
