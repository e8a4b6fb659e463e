#!/bin/sh
# The CUDA backend's check on a machine with a GPU (docs/runtime.md, "CUDA"):
# builds with CUDA, runs tests/test_cuda (the primitives against the CPU
# backend's, fp32), measures the GPU's copy bandwidth and bf16 GEMM rate
# beside the hardware preset's (bench/bench_cuda), checks the gradients of
# 1F1B, ZB-H1, ZB-V, 1F1B-interleaved and PO-F with one GPU emulating 4
# devices and, with 2 or more GPUs, over NCCL; launches 1F1B, ZB-H1,
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

# The gradients of the five kinds of schedule the issue names (1F1B,
# ZB-H1, ZB-V, an interleaved one, PO-F) in fp32, on gpt3-6.7b split over
# 4 devices with a PCIe link (the families split it again as they need)
# and the CPU-sized workload: one GPU emulating the 4 devices
# (device-to-device copies), and over NCCL with a GPU each where there are
# 4 (ncclCommInitAll), or on 2 devices where there are 2.
small=hidden=128,ffn=512,tokens=128
./pipewright problem --model gpt3-6.7b --hardware H200 --devices 4 \
    --microbatches 8 --offload -o "$out/four.json"
./pipewright problem --model gpt3-6.7b --hardware H200 --devices 2 \
    --microbatches 8 --offload -o "$out/two.json"
check_grads() {	# LABEL PROBLEM GPUS FAMILY
	step "gradients of $4 on $1 (fp32)"
	PW_CUDA_MATH=fp32 ./pipewright launch "$2" --family "$4" --backend cuda \
	    --gpus "$3" --workload "$small" --iterations 3 >"$out/$4.$1.txt"
	grep '^gradients' "$out/$4.$1.txt"
}
for f in 1f1b zb-h1 zb-v 1f1b-interleaved po-f; do
	check_grads emulated "$out/four.json" 1 "$f"
	if [ "$gpus" -ge 4 ]; then
		check_grads nccl4 "$out/four.json" 4 "$f"
	elif [ "$gpus" -ge 2 ]; then
		check_grads nccl2 "$out/two.json" 2 "$f"
	fi
done

# The default problem (gpt3-6.7b on 8 devices); the CPU backend's scaled
# workload for the fp32 gradient check (the sequential reference is
# computed too), the model's own widths with fewer tokens for the timed runs.
problem=examples/default.json
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
