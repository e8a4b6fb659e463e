/*
 * presets.c - hardware and model presets for the cost model; the sources
 * of every number are in docs/cost-model.md.
 */
#include <strings.h>

#include "pipewright.h"

#define PW_MIB			1048576.0
/* Half the peak: large-model training reaches 40-60% of it (MFU). */
#define PW_EFFICIENCY		0.5
/* Estimates, not measurements: PCIe Gen4 x16 carries 31.5 GB/s raw each
 * way, Gen5 x16 63 GB/s; pinned copies reach about 80% of that. */
#define PW_PCIE_GEN4		25e9
#define PW_PCIE_GEN5		50e9
#define PW_PCIE_LATENCY		10e-6
/* NVLink per direction by the datasheets (600 and 900 GB/s both ways). */
#define PW_NVLINK3		300e9
#define PW_NVLINK4		450e9
#define PW_P2P_LATENCY		5e-6

/* Dense bf16 peaks by the datasheets; memory as nvidia-smi totals it. */
#define PW_HW(id, flops, mib, pcie, p2p) \
	{ .name = id, .peak_flops = flops, .efficiency = PW_EFFICIENCY, \
	    .memory = (mib) * PW_MIB, .pcie_d2h = pcie, .pcie_h2d = pcie, \
	    .pcie_latency = PW_PCIE_LATENCY, .p2p_bandwidth = p2p, \
	    .p2p_latency = PW_P2P_LATENCY }

const struct pw_hardware pw_hardware_presets[] = {
	PW_HW("A100-80GB", 312e12, 81920, PW_PCIE_GEN4, PW_NVLINK3),
	PW_HW("H100-SXM", 989e12, 81559, PW_PCIE_GEN5, PW_NVLINK4),
	PW_HW("H200", 989e12, 143771, PW_PCIE_GEN5, PW_NVLINK4),
};
const size_t pw_nhardware_presets =
    sizeof pw_hardware_presets / sizeof pw_hardware_presets[0];

/*
 * PipeOffload's models (its table 2: GQA with 8 key/value heads, FFN 4h;
 * a vocabulary of 32000 makes the parameter counts match the names) at
 * its sequence of 4096 with its recomputation, and GPT-3's (Brown et al.
 * 2020, table 2.1, with heads of 128 where its head counts do not divide
 * hidden: 1.3B has 16 heads, not 24; 13B's hidden is 40 x 128 = 5120, not
 * 5140) at sequence 2048.  Microbatch 1, flash attention.
 */
#define PW_MODEL(id, l, a, h, kv, f, s, v, rc, gated) \
	{ .name = id, .layers = l, .hidden = h, .heads = a, .kv_heads = kv, \
	    .ffn = f, .seq = s, .vocab = v, .micro_batch = 1, \
	    .flash_attention = true, .recompute = rc, .gated_mlp = gated, \
	    .tied_embeddings = false }
#define PW_PO(id, l, a, h) \
	PW_MODEL(id, l, a, h, 8, 0, 4096, 32000, PW_RECOMPUTE_PIPEOFFLOAD, \
	    false)
#define PW_GPT3(id, l, a, h) \
	PW_MODEL(id, l, a, h, 0, 0, 2048, 50257, PW_RECOMPUTE_NONE, false)
/* The Hugging Face config.json of each (SwiGLU, GQA, untied embeddings)
 * at the sequence its pre-training ran most of its tokens with: 8192 for
 * Llama 3 and Mistral, 4096 for Qwen2.5 (docs/cost-model.md). */
#define PW_SWIGLU(id, l, a, h, kv, f, s, v) \
	PW_MODEL(id, l, a, h, kv, f, s, v, PW_RECOMPUTE_NONE, true)

const struct pw_model pw_model_presets[] = {
	PW_PO("pipeoffload-5.8b", 32, 32, 4096),
	PW_PO("pipeoffload-10.5b", 38, 40, 5120),
	PW_PO("pipeoffload-18.1b", 46, 48, 6144),
	PW_PO("pipeoffload-42.9b", 62, 64, 8192),
	PW_PO("pipeoffload-66.6b", 62, 80, 10240),
	PW_PO("pipeoffload-83.8b", 78, 80, 10240),
	PW_GPT3("gpt3-1.3b", 24, 16, 2048),
	PW_GPT3("gpt3-2.7b", 32, 32, 2560),
	PW_GPT3("gpt3-6.7b", 32, 32, 4096),
	PW_GPT3("gpt3-13b", 40, 40, 5120),
	PW_GPT3("gpt3-175b", 96, 96, 12288),
	PW_SWIGLU("llama3-8b", 32, 32, 4096, 8, 14336, 8192, 128256),
	PW_SWIGLU("llama3-70b", 80, 64, 8192, 8, 28672, 8192, 128256),
	PW_SWIGLU("llama3.1-405b", 126, 128, 16384, 8, 53248, 8192, 128256),
	PW_SWIGLU("qwen2.5-7b", 28, 28, 3584, 4, 18944, 4096, 152064),
	PW_SWIGLU("qwen2.5-14b", 48, 40, 5120, 8, 13824, 4096, 152064),
	PW_SWIGLU("qwen2.5-72b", 80, 64, 8192, 8, 29568, 4096, 152064),
	PW_SWIGLU("mistral-7b", 32, 32, 4096, 8, 14336, 8192, 32000),
};
const size_t pw_nmodel_presets =
    sizeof pw_model_presets / sizeof pw_model_presets[0];

const struct pw_hardware *
pw_hardware_find(const char *name)
{
	size_t i;

	for (i = 0; i < pw_nhardware_presets; i++)
		if (strcasecmp(pw_hardware_presets[i].name, name) == 0)
			return &pw_hardware_presets[i];
	return NULL;
}

const struct pw_model *
pw_model_find(const char *name)
{
	size_t i;

	for (i = 0; i < pw_nmodel_presets; i++)
		if (strcasecmp(pw_model_presets[i].name, name) == 0)
			return &pw_model_presets[i];
	return NULL;
}
