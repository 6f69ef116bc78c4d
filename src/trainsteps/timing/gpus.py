"""Accelerators: peak dense TFLOP/s per data type, each entry with its source.

Dense means without 2:4 structured sparsity (vendor tables often print the sparse figure, twice as large; these are
the dense ones). GeForce cards are listed at their FP32-accumulate tensor rate, which mixed-precision training uses
(half their FP16-accumulate rate). Keys are lower case with dashes; `find_gpu` accepts spaces, underscores and case.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from trainsteps.errors import InputError


@dataclass(frozen=True, slots=True)
class Gpu:
    """One accelerator model."""

    name: str
    """Key used by `--gpu`, e.g. `h100-sxm`."""
    title: str
    """The product as its vendor names it."""
    tflops: dict[str, float]
    """Peak dense TFLOP/s by data type: `bf16`, `fp16`, `fp8`, `tf32`, `fp32`."""
    memory_gb: float
    """Memory per device (GB)."""
    source: str
    """Where the figures come from."""

    def peak(self, dtype: str = "bf16") -> float:
        """Peak dense FLOP/s (not tera) for `dtype`; bf16 falls back to fp16 on parts without bf16 (V100)."""
        if dtype in self.tflops:
            return self.tflops[dtype] * 1e12
        if dtype == "bf16" and "fp16" in self.tflops:
            return self.tflops["fp16"] * 1e12
        raise InputError("time.error.gpu_dtype", "time.hint.gpu_dtype", gpu=self.name, dtype=dtype,
                         known=", ".join(sorted(self.tflops)))


_NV_H100 = "NVIDIA H100 Tensor Core GPU datasheet (2023), dense = half the sparse figures"
GPUS: dict[str, Gpu] = {gpu.name: gpu for gpu in (
    Gpu("h100-sxm", "NVIDIA H100 SXM5 80GB", {"fp8": 1978.9, "bf16": 989.4, "fp16": 989.4, "tf32": 494.7, "fp32": 66.9},
        80, _NV_H100),
    Gpu("h100-pcie", "NVIDIA H100 PCIe 80GB", {"fp8": 1513.0, "bf16": 756.5, "fp16": 756.5, "tf32": 378.0, "fp32": 51.2},
        80, _NV_H100),
    Gpu("h100-nvl", "NVIDIA H100 NVL 94GB", {"fp8": 1670.5, "bf16": 835.5, "fp16": 835.5, "tf32": 417.5, "fp32": 60.0},
        94, _NV_H100),
    Gpu("h200", "NVIDIA H200 SXM 141GB", {"fp8": 1978.9, "bf16": 989.4, "fp16": 989.4, "tf32": 494.7, "fp32": 66.9},
        141, "NVIDIA H200 Tensor Core GPU datasheet (2024): the H100 SXM's compute with 141 GB HBM3e"),
    Gpu("h800", "NVIDIA H800 SXM5 80GB", {"fp8": 1978.9, "bf16": 989.4, "fp16": 989.4, "tf32": 494.7, "fp32": 66.9},
        80, "NVIDIA H800 (export variant of the H100 SXM5: same tensor cores, NVLink cut to 400 GB/s); H100 datasheet figures"),
    Gpu("h20", "NVIDIA H20 96GB", {"fp8": 296.0, "bf16": 148.0, "fp16": 148.0, "tf32": 74.0, "fp32": 44.0},
        96, "NVIDIA HGX H20 product brief (2024): 148 TFLOPS FP16/BF16 dense, 296 FP8"),
    Gpu("b200", "NVIDIA B200 (HGX, 1000 W)", {"fp8": 4500.0, "bf16": 2250.0, "fp16": 2250.0, "tf32": 1100.0, "fp32": 75.0},
        180, "NVIDIA HGX B200 datasheet (2025): 4.5 PFLOPS FP16/BF16 and 9 PFLOPS FP8 sparse per GPU; dense = half"),
    Gpu("a100-80g", "NVIDIA A100 SXM4 80GB", {"bf16": 312.0, "fp16": 312.0, "tf32": 156.0, "fp32": 19.5},
        80, "NVIDIA A100 Tensor Core GPU datasheet (2021): 312 TFLOPS BF16/FP16 dense (624 sparse)"),
    Gpu("a100-40g", "NVIDIA A100 SXM4 40GB", {"bf16": 312.0, "fp16": 312.0, "tf32": 156.0, "fp32": 19.5},
        40, "NVIDIA A100 Tensor Core GPU datasheet (2021): 312 TFLOPS BF16/FP16 dense (624 sparse)"),
    Gpu("a800", "NVIDIA A800 SXM4 80GB", {"bf16": 312.0, "fp16": 312.0, "tf32": 156.0, "fp32": 19.5},
        80, "NVIDIA A800 (export variant of the A100 80GB: same tensor cores, NVLink cut to 400 GB/s); A100 datasheet figures"),
    Gpu("l40s", "NVIDIA L40S 48GB", {"fp8": 733.0, "bf16": 362.05, "fp16": 362.05, "tf32": 183.0, "fp32": 91.6},
        48, "NVIDIA L40S datasheet (2023): 362.05 TFLOPS BF16/FP16 dense (733 sparse)"),
    Gpu("rtx4090", "NVIDIA GeForce RTX 4090 24GB", {"fp8": 330.3, "bf16": 165.2, "fp16": 165.2, "tf32": 82.6, "fp32": 82.6},
        24, "NVIDIA Ada Lovelace GPU architecture whitepaper v1.1 (2023), appendix: FP16/BF16 tensor with FP32 accumulate 165.2 dense"),
    Gpu("rtx3090", "NVIDIA GeForce RTX 3090 24GB", {"bf16": 71.0, "fp16": 71.0, "tf32": 35.6, "fp32": 35.6},
        24, "NVIDIA Ampere GA102 GPU architecture whitepaper v2.0 (2021), table 9: FP16/BF16 tensor with FP32 accumulate 71 dense "
        "(142 sparse); 35.6 is its TF32 tensor and FP32 rate"),
    Gpu("l4", "NVIDIA L4 24GB", {"fp8": 242.5, "bf16": 121.0, "fp16": 121.0, "tf32": 60.0, "fp32": 30.3},
        24, "NVIDIA L4 Tensor Core GPU datasheet (2023): 242 TFLOPS BF16/FP16 and 485 FP8 with sparsity; dense = half"),
    Gpu("a10", "NVIDIA A10 24GB", {"bf16": 125.0, "fp16": 125.0, "tf32": 62.5, "fp32": 31.2},
        24, "NVIDIA A10 Tensor Core GPU datasheet (2021): 125 TFLOPS BF16/FP16 dense (250 sparse)"),
    Gpu("a10g", "NVIDIA A10G 24GB (AWS G5)", {"bf16": 70.0, "fp16": 70.0, "tf32": 35.0, "fp32": 31.2},
        24, "NVIDIA publishes no A10G datasheet (an AWS-only A10 variant at lower tensor clocks); 70 TFLOPS BF16 dense is "
        "the figure third-party benchmarks (and torchtitan-style peak tables) use; measure and pass --peak-tflops if in doubt"),
    Gpu("rtx-a6000", "NVIDIA RTX A6000 48GB", {"bf16": 154.8, "fp16": 154.8, "tf32": 77.4, "fp32": 38.7},
        48, "NVIDIA Ampere GA102 GPU architecture whitepaper v2.0 (2021): RTX A6000 FP16/BF16 tensor with FP32 accumulate "
        "154.8 dense (309.7 sparse)"),
    Gpu("rtx-6000-ada", "NVIDIA RTX 6000 Ada Generation 48GB", {"fp8": 728.5, "bf16": 364.2, "fp16": 364.2, "tf32": 182.1,
                                                                 "fp32": 91.1},
        48, "NVIDIA Ada Lovelace GPU architecture whitepaper v1.1 (2023), appendix: RTX 6000 Ada FP16/BF16 tensor with FP32 "
        "accumulate 364.2 dense (728.5 sparse)"),
    Gpu("rtx5090", "NVIDIA GeForce RTX 5090 32GB", {"fp8": 419.0, "bf16": 209.5, "fp16": 209.5, "tf32": 104.8, "fp32": 104.8},
        32, "NVIDIA RTX Blackwell GPU architecture whitepaper v1.0 (2025), appendix: FP16/BF16 tensor with FP32 accumulate "
        "209.5 dense (419 sparse)"),
    Gpu("l20", "NVIDIA L20 48GB", {"fp8": 239.0, "bf16": 119.5, "fp16": 119.5, "tf32": 59.8, "fp32": 59.8},
        48, "NVIDIA L20 product brief (2023): 239 TFLOPS FP16/BF16 with sparsity, 119.5 dense"),
    Gpu("gh200", "NVIDIA GH200 Grace Hopper (H100 96GB)", {"fp8": 1978.9, "bf16": 989.4, "fp16": 989.4, "tf32": 494.7,
                                                           "fp32": 66.9},
        96, "NVIDIA GH200 Grace Hopper Superchip datasheet (2023): the H100 SXM's tensor cores; dense = half the sparse figures"),
    Gpu("gb200", "NVIDIA GB200 (one Blackwell GPU of the superchip)", {"fp8": 5000.0, "bf16": 2500.0, "fp16": 2500.0,
                                                                       "tf32": 1250.0, "fp32": 80.0},
        186, "NVIDIA GB200 NVL72 datasheet (2024): 10 PFLOPS FP16/BF16 sparse per superchip of 2 GPUs; dense per GPU = 2.5"),
    Gpu("b300", "NVIDIA B300 (HGX, Blackwell Ultra)", {"fp8": 4500.0, "bf16": 2250.0, "fp16": 2250.0, "tf32": 1100.0,
                                                       "fp32": 75.0},
        288, "NVIDIA HGX B300 datasheet (2025): FP16/BF16 and FP8 as the B200 (Blackwell Ultra adds FP4); dense = half the "
        "sparse figures"),
    Gpu("mi250x", "AMD Instinct MI250X 128GB (one OAM, two dies)", {"bf16": 383.0, "fp16": 383.0, "fp32": 47.9},
        128, "AMD Instinct MI250X data sheet (2021): 383 TFLOPS FP16/BF16 dense (no sparse figure); PyTorch sees each of its two "
        "dies as a device of 191.5: count devices as OAMs here, or pass --peak-tflops 191.5 per die"),
    Gpu("mi325x", "AMD Instinct MI325X 256GB", {"fp8": 2614.9, "bf16": 1307.4, "fp16": 1307.4, "tf32": 653.7, "fp32": 163.4},
        256, "AMD Instinct MI325X data sheet (2024): 1,307.4 TFLOPS FP16/BF16 dense (2,614.9 with sparsity)"),
    Gpu("mi355x", "AMD Instinct MI355X 288GB", {"fp8": 5033.2, "bf16": 2516.6, "fp16": 2516.6, "tf32": 1258.3, "fp32": 157.3},
        288, "AMD Instinct MI355X data sheet (2025): 2.5 PFLOPS FP16/BF16 dense (5.0 with sparsity), FP8 5.0 dense"),
    Gpu("ascend-910c", "Huawei Ascend 910C", {"bf16": 780.0, "fp16": 780.0},
        128, "Huawei publishes no figure; third-party reports (two 910B-class dies per package) give ~780-800 TFLOPS FP16"),
    Gpu("gaudi2", "Intel Gaudi 2 96GB", {"fp8": 865.0, "bf16": 432.0},
        96, "Intel Gaudi 2 white paper (2022) and Gaudi 3 white paper (2024), comparison table: Gaudi 2 432 TFLOPS BF16 "
        "matrix, 865 FP8"),
    Gpu("gaudi3", "Intel Gaudi 3 128GB", {"fp8": 1835.0, "bf16": 1835.0},
        128, "Intel Gaudi 3 AI accelerator white paper (2024): 1,835 TFLOPS BF16 and FP8 matrix"),
    Gpu("tpu-v5e", "Google Cloud TPU v5e (one chip)", {"bf16": 197.0},
        16, "Google Cloud TPU v5e documentation: 197 TFLOPS BF16 per chip"),
    Gpu("tpu-v5p", "Google Cloud TPU v5p (one chip)", {"bf16": 459.0},
        95, "Google Cloud TPU v5p documentation: 459 TFLOPS BF16 per chip"),
    Gpu("tpu-v6e", "Google Cloud TPU v6e Trillium (one chip)", {"bf16": 918.0},
        32, "Google Cloud TPU v6e documentation: 918 TFLOPS BF16 per chip"),
    Gpu("v100", "NVIDIA V100 SXM2 32GB", {"fp16": 125.0, "fp32": 15.7},
        32, "NVIDIA V100 Tensor Core GPU datasheet (2020): 125 TFLOPS FP16 tensor (SXM2); no bf16 (fp16 is used)"),
    Gpu("t4", "NVIDIA T4 16GB", {"fp16": 65.0, "fp32": 8.1},
        16, "NVIDIA T4 Tensor Core GPU datasheet (2019): 65 TFLOPS mixed precision FP16/FP32 tensor; no bf16 (fp16 is used)"),
    Gpu("mi300x", "AMD Instinct MI300X 192GB", {"fp8": 2614.9, "bf16": 1307.4, "fp16": 1307.4, "tf32": 653.7, "fp32": 163.4},
        192, "AMD Instinct MI300X data sheet (2023): 1,307.4 TFLOPS FP16/BF16 dense (2,614.9 with sparsity)"),
    Gpu("ascend-910b", "Huawei Ascend 910B 64GB", {"bf16": 320.0, "fp16": 320.0},
        64, "Huawei publishes no per-SKU figure; third-party reports give ~320 TFLOPS FP16 (910B3 ~313, 910B2 ~376), Ascend 910: 256"),
)}

ALIASES = {
    "h100": "h100-sxm", "h100sxm": "h100-sxm", "h100-sxm5": "h100-sxm", "h100pcie": "h100-pcie", "h100nvl": "h100-nvl",
    "a100": "a100-80g", "a100-80gb": "a100-80g", "a100-40gb": "a100-40g", "4090": "rtx4090", "rtx-4090": "rtx4090",
    "3090": "rtx3090", "rtx-3090": "rtx3090", "910b": "ascend-910b", "ascend910b": "ascend-910b", "mi300": "mi300x",
    "h200-sxm": "h200", "b200-sxm": "b200", "l40": "l40s", "v100-sxm2": "v100",
    "a6000": "rtx-a6000", "rtxa6000": "rtx-a6000", "6000-ada": "rtx-6000-ada", "rtx6000ada": "rtx-6000-ada",
    "rtx-6000": "rtx-6000-ada", "5090": "rtx5090", "rtx-5090": "rtx5090", "910c": "ascend-910c",
    "ascend910c": "ascend-910c", "gaudi-2": "gaudi2", "gaudi-3": "gaudi3", "hl-225": "gaudi2", "v5e": "tpu-v5e",
    "v5p": "tpu-v5p", "v6e": "tpu-v6e", "trillium": "tpu-v6e", "tpuv5e": "tpu-v5e", "tpuv5p": "tpu-v5p",
    "tpuv6e": "tpu-v6e", "mi250": "mi250x", "mi325": "mi325x", "mi355": "mi355x", "a10-24g": "a10", "a10g-24g": "a10g",
    "tesla-t4": "t4", "t4-16g": "t4",
}


def custom_gpu(tflops: float, dtype: str = "bf16", named: Gpu | None = None) -> Gpu:
    """`--peak-tflops 312`: a peak dense TFLOP/s given by hand (for `dtype`), for any accelerator; with `--gpu` too, it
    replaces that card's figure (a card run at other clocks)."""
    from trainsteps.timing.estimate import check_positive

    check_positive(tflops, "--peak-tflops")
    title = f"{named.title} at {tflops:g} TFLOP/s" if named else f"an accelerator of {tflops:g} TFLOP/s"
    return Gpu(named.name if named else "custom", title, {dtype: float(tflops)}, named.memory_gb if named else 0.0,
               f"--peak-tflops {tflops:g}")


VENDOR_WORDS = frozenset({"nvidia", "geforce", "tesla", "amd", "instinct"})
"""Words of a printed device name that name no card (`NVIDIA GeForce RTX 4090`, `Tesla T4`)."""
PACKAGING_WORDS = frozenset({"sxm2", "sxm4", "sxm5", "hbm3", "hbm3e", "generation"})
"""Words of a printed device name that do not change the card's peak (`NVIDIA A800-SXM4-80GB`, `NVIDIA H100 80GB HBM3`)."""


def find_gpu(name: str) -> Gpu:
    """The GPU a user named (case, spaces and underscores ignored), also as nvidia-smi and torch print it
    (`NVIDIA A100 80GB PCIe`), or InputError listing the known ones with the closest match."""
    words = "-".join(str(name).strip().lower().replace("_", " ").replace("-", " ").split())
    for key in _readings(words):
        key = ALIASES.get(key, ALIASES.get(key.replace("-", ""), key))
        if key in GPUS:
            return GPUS[key]
    key = "-".join(word for word in words.split("-") if word not in VENDOR_WORDS) or words
    close = difflib.get_close_matches(key, list(GPUS) + list(ALIASES), n=1, cutoff=0.5)
    suggestion = ALIASES.get(close[0], close[0]) if close else None
    hint = "time.hint.gpu_did_you_mean" if suggestion else "time.hint.gpu"
    raise InputError("time.error.gpu", hint, gpu=name, suggestion=suggestion or "", known=", ".join(GPUS))


def _readings(key: str):
    """The ways to read a typed or printed name, most literal first: as given; without the vendor's words; without
    the packaging words; with its memory as the table's suffix (`a100-80g`); the chip alone when nothing but a memory
    size was left over (a typo is never read as some card)."""
    yield key
    words = [word for word in key.split("-") if word not in VENDOR_WORDS]
    yield "-".join(words)
    words = [word for word in words if word not in PACKAGING_WORDS]
    memory = [word for word in words if word.rstrip("b").rstrip("g").isdigit() and word.endswith(("gb", "g"))]
    rest = [word for word in words if word not in memory]
    if memory:
        yield "-".join([*rest, memory[0].removesuffix("b")])
    yield "-".join(rest)
    if memory and rest and set(rest[1:]) <= {"pcie"}:  # a PCIe card of a chip the table holds by memory (A100)
        yield f"{rest[0]}-{memory[0].removesuffix('b')}"
    if memory and len(rest) == 1:  # the chip, once only its memory size is left over (H100 80GB HBM3)
        yield rest[0]
