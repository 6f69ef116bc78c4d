"""A model's shape read from its Hugging Face config.json: the parameters that multiply per token (MoE: the routed
top-k and the shared experts), all parameters, and what the attention term needs (layers, widths, sliding windows).

Each family's config states its sizes its own way; the model code, not the key name, decides what they mean:

- Qwen-1 (`qwen`): `intermediate_size` is twice the MLP width (modeling_qwen.py builds w1/w2 of
  `intermediate_size // 2`); heads x `kv_channels` wide, no grouped K/V.
- ChatGLM (`chatglm`): `num_layers`, `ffn_hidden_size` (SwiGLU), `multi_query_group_num` K/V groups of
  `kv_channels`, `padded_vocab_size`.
- DeepSeek V2/V3 and GLM-4.5 (`deepseek_v2`, `deepseek_v3`, `glm4_moe`): multi-head latent attention (DeepSeek:
  `q_lora_rank`, `kv_lora_rank`, `qk_nope_head_dim`, `qk_rope_head_dim`, `v_head_dim`), the first
  `first_k_dense_replace` layers dense, `n_shared_experts` of `moe_intermediate_size` next to the routed ones.
- Qwen-MoE (`qwen2_moe`, `qwen3_moe`): `shared_expert_intermediate_size`, `decoder_sparse_step`, `mlp_only_layers`.
- Llama 4 (`llama4_text`): every `interleave_moe_layer_step`-th layer MoE (top-k experts of `intermediate_size` + a
  shared expert), the others dense of `intermediate_size_mlp`.
- GPT-OSS (`gpt_oss`): `num_local_experts` of `intermediate_size`, `num_experts_per_tok` (or `experts_per_token`).
- Plain (ungated) MLPs: GPT-2, GPT-NeoX/Pythia, Falcon (multi-query unless `new_decoder_architecture`), MPT
  (`expansion_ratio`), OPT, BLOOM, GPT-J, Phi-1/2, StarCoder; GPT-2 adds learned positions.
- Sliding windows (Mistral v0.1, Gemma 2/3, GPT-OSS, `layer_types`) shorten what those layers attend.

An unknown `model_type` is read as a Llama-style decoder and the shape says so (`notes`), never silently.
Pure: takes the parsed dict (reading the file is `timing.model_files`).
"""

from __future__ import annotations

from dataclasses import dataclass

from trainsteps.errors import InputError


@dataclass(frozen=True, slots=True)
class ModelShape:
    """What the FLOPs model needs to know about a model."""

    matmul_params: float
    """Parameters doing matrix multiplies per token: all layers' weights (MoE: active experts) + the LM head."""
    total_params: float
    """All parameters (MoE: every expert), embeddings included; for the report."""
    layers: int | None = None
    """Transformer layers (None: the attention term is left out)."""
    attention_width: int | None = None
    """num_attention_heads x head_dim (the query width; grouped K/V heads do not shrink QKᵀ or AV)."""
    source: str = ""
    """`config.json (qwen2)` or `--params 7.6e9`."""
    active_params: float | None = None
    """Parameters a token uses (MoE: routed top-k + shared experts), embeddings included: what model cards call
    "activated parameters". None: the same as total_params."""
    sliding_layers: int = 0
    """Layers that attend within a sliding window (Mistral v0.1, Gemma 2/3 local layers, GPT-OSS)."""
    sliding_window: int | None = None
    """The window of those layers (tokens)."""
    notes: tuple[tuple[str, dict], ...] = ()
    """(message id, params) about the reading: an unknown model_type read generically."""
    kv_width: int | None = None
    """Width of the K (and of the V) a token caches per layer: num_key_value_heads x head_dim; DeepSeek's latent
    attention caches kv_lora_rank + the RoPE key, counted as half each. None: not read (timing.rl assumes grouped
    heads)."""

    @property
    def experts_active(self) -> float:
        """Share of all parameters a token uses (1.0 for a dense model)."""
        return (self.active_params or self.total_params) / self.total_params


KNOWN_MODEL_TYPES = frozenset({
    "llama", "mistral", "mixtral", "qwen", "qwen2", "qwen3", "qwen2_moe", "qwen3_moe", "deepseek", "deepseek_v2",
    "deepseek_v3", "gemma", "gemma2", "gemma3", "gemma3_text", "phi3", "phi4", "glm", "glm4", "glm4_moe", "chatglm",
    "internlm", "internlm2", "internlm3", "baichuan", "yi", "gpt_oss", "olmo", "olmo2", "olmo3", "olmoe", "gpt_neox",
    "falcon", "mpt", "gpt2", "llama4_text", "llama4", "phi", "gptj", "opt", "bloom", "gpt_bigcode", "starcoder2",
    "stablelm", "minicpm", "orion", "cohere", "granite", "smollm3", "ministral", "qwen2_vl", "qwen2_5_vl",
    "qwen3_vl", "llava", "mllama", "nemotron",
})
"""Model types read by the rules of this module (decoders; a vision-language config's text tower)."""

_UNGATED = frozenset({"gpt2", "gpt_neox", "gptj", "opt", "bloom", "falcon", "phi", "gpt_bigcode", "starcoder2", "mpt",
                      "bert", "roberta", "nemotron"})
"""Families whose MLP is two matrices (up, down) instead of three (gate, up, down); Nemotron-4's squared ReLU is one
(transformers' NemotronMLP: up_proj, down_proj)."""

_TIED_BY_DEFAULT = frozenset({"gemma", "gemma2", "gemma3", "gemma3_text", "gpt2", "mpt", "falcon", "opt", "bloom",
                              "gpt_bigcode", "gptj", "starcoder2", "minicpm", "cohere"})
"""Families whose config class ties the LM head to the embedding when the config.json does not say."""


class _Reader:
    """Typed reads of a config dict: a present size must be a positive (or non-negative) whole number."""

    def __init__(self, config: dict, source: str):
        self.config, self.source = config, source

    def size(self, *keys: str, default: int | None = None, zero: bool = False) -> int | None:
        for key in keys:
            value = self.config.get(key)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < (0 if zero else 1):
                raise InputError("time.error.config_value", "time.hint.config_sizes", source=self.source, key=key,
                                 value=str(value)[:40])
            return value
        return default


def _text_config(config: dict) -> dict:
    """A vision-language config: its language model's keys (the text tower is what trains on tokens)."""
    for key in ("text_config", "llm_config", "language_config"):
        inner = config.get(key)
        if isinstance(inner, dict) and "hidden_size" not in config and "d_model" not in config:
            return {**{k: v for k, v in config.items() if k != key}, **inner}
    return config


def shape_from_config(config: dict, source: str = "config.json") -> ModelShape:
    """Parameter counts of a decoder from a Hugging Face config.json (dense, MoE, gated or plain MLP).

    Raises InputError when the config lacks the sizes (hidden_size, num_hidden_layers, vocab_size) or a size is not a
    positive whole number."""
    config = _text_config(config)
    read = _Reader(config, source)
    model_type = str(config.get("model_type", ""))
    d = read.size("hidden_size", "n_embd", "d_model")
    layers = read.size("num_hidden_layers", "n_layer", "num_layers", "n_layers")
    vocab = read.size("padded_vocab_size", "vocab_size")
    if not (d and layers and vocab):
        raise InputError("time.error.config_sizes", "time.hint.config_sizes", source=source)
    attention, q_width, attend_width = _attention(read, model_type, d)
    dense_ffn = _dense_ffn(read, model_type, d)
    mats = 2 if model_type in _UNGATED else 3
    active_mlp, total_mlp, router = _mlp(read, model_type, d, layers, dense_ffn, mats)
    body = layers * attention + router
    lm_head = d * vocab
    tied = config.get("tie_word_embeddings", model_type in _TIED_BY_DEFAULT)
    positions = (read.size("n_positions", "max_position_embeddings", default=0) or 0) * d if model_type == "gpt2" else 0
    embeddings = vocab * d + (0 if tied is True else lm_head) + positions
    sliding_layers, window = _sliding(config, read, model_type, layers)
    notes: tuple = ()
    if model_type not in KNOWN_MODEL_TYPES:
        notes = (("time.note.model_type_generic", {"model_type": model_type or "?", "source": source}),)
    return ModelShape(float(body + active_mlp + lm_head), float(body + total_mlp + embeddings), int(layers),
                      int(attend_width or q_width), f"{source} ({model_type or 'decoder'})",
                      active_params=float(body + active_mlp + embeddings), sliding_layers=sliding_layers,
                      sliding_window=window, notes=notes, kv_width=_kv_width(read, model_type, d))


def _kv_width(read: _Reader, model_type: str, d: int) -> int | None:
    """What one token's K (or V) cache holds per layer (None for the families whose cache this does not read)."""
    heads = read.size("num_attention_heads", "n_head", "n_heads", default=1)
    if model_type in ("deepseek_v2", "deepseek_v3") and read.size("kv_lora_rank"):
        return (read.size("kv_lora_rank") + read.size("qk_rope_head_dim", default=64)) // 2
    if model_type in ("chatglm", "qwen", "falcon"):
        return None
    kv_heads = _multi_query_kv_heads(read, heads) if model_type == "gpt_bigcode" else \
        read.size("num_key_value_heads", "num_kv_heads", "multi_query_group_num", default=heads)
    return kv_heads * read.size("head_dim", "kv_channels", default=max(1, d // heads))


def _multi_query_kv_heads(read: _Reader, heads: int) -> int:
    """GPTBigCode (StarCoder, SantaCoder) and the first Falcons share one K/V head unless `multi_query` is false
    (transformers' default for both: true)."""
    return 1 if read.config.get("multi_query", True) else heads


def _attention(read: _Reader, model_type: str, d: int) -> tuple[int, int, int]:
    """(parameters of one layer's attention, query width, the width QKᵀ and AV work at on average)."""
    heads = read.size("num_attention_heads", "n_head", "n_heads", default=1)
    if model_type in ("deepseek_v2", "deepseek_v3") and read.size("kv_lora_rank"):
        return _latent_attention(read, d, heads)
    if model_type == "chatglm":
        head_dim = read.size("kv_channels", default=d // heads)
        multi_query = read.config.get("multi_query_attention")
        kv_heads = read.size("multi_query_group_num", default=heads) if multi_query else heads
    elif model_type == "qwen":
        head_dim, kv_heads = read.size("kv_channels", default=d // heads), heads
    elif model_type == "falcon":
        head_dim = read.size("head_dim", default=d // heads)
        if read.config.get("new_decoder_architecture"):
            kv_heads = read.size("num_kv_heads", "num_key_value_heads", default=heads)
        else:
            kv_heads = _multi_query_kv_heads(read, heads)
    elif model_type == "gpt_bigcode":
        head_dim, kv_heads = max(1, d // heads), _multi_query_kv_heads(read, heads)
    else:
        kv_heads = read.size("num_key_value_heads", "num_kv_heads", "multi_query_group_num", default=heads)
        head_dim = read.size("head_dim", "kv_channels", default=max(1, d // heads))
    q_width, kv_width = heads * head_dim, kv_heads * head_dim
    return d * q_width + 2 * d * kv_width + q_width * d, q_width, q_width


def _latent_attention(read: _Reader, d: int, heads: int) -> tuple[int, int, int]:
    """DeepSeek's multi-head latent attention: low-rank Q (optional) and a compressed KV with a shared RoPE key."""
    nope = read.size("qk_nope_head_dim", default=128)
    rope = read.size("qk_rope_head_dim", default=64)
    v_dim = read.size("v_head_dim", default=128)
    q_lora = read.size("q_lora_rank", default=0, zero=True)
    kv_lora = read.size("kv_lora_rank")
    qk = heads * (nope + rope)
    q = d * q_lora + q_lora * qk if q_lora else d * qk
    kv = d * (kv_lora + rope) + kv_lora * heads * (nope + v_dim)
    out = heads * v_dim * d
    return q + kv + out, qk, (qk + heads * v_dim) // 2  # QKᵀ at nope+rope wide, AV at v_head_dim


def _dense_ffn(read: _Reader, model_type: str, d: int) -> int:
    """The MLP width of a dense layer."""
    if model_type == "qwen":  # modeling_qwen.QWenMLP: w1, w2 of config.intermediate_size // 2
        return read.size("intermediate_size", default=8 * d) // 2
    if model_type == "mpt":
        return read.size("expansion_ratio", default=4) * d
    if model_type == "llama4_text":
        return read.size("intermediate_size_mlp", "intermediate_size", default=4 * d)
    return read.size("ffn_hidden_size", "intermediate_size", "n_inner", "ffn_dim", default=4 * d)


def _mlp(read: _Reader, model_type: str, d: int, layers: int, dense_ffn: int, mats: int) -> tuple[int, int, int]:
    """(active MLP parameters, all MLP parameters, router parameters) over all layers."""
    experts = read.size("num_experts", "num_local_experts", "n_routed_experts", "moe_num_experts", default=0, zero=True)
    top_k = read.size("num_experts_per_tok", "experts_per_token", "moe_topk", "moe_top_k", default=0, zero=True)
    if model_type == "llama4_text" and experts and not top_k:
        top_k = 1
    if not (experts and top_k):
        mlp = layers * mats * d * dense_ffn
        return mlp, mlp, 0
    expert_ffn = read.size("moe_intermediate_size", default=None) or read.size("intermediate_size", default=dense_ffn)
    shared = read.size("n_shared_experts", default=0, zero=True) * expert_ffn + \
        read.size("shared_expert_intermediate_size", default=0, zero=True)
    if model_type == "llama4_text":
        shared = expert_ffn  # Llama4TextMoe: one shared expert of intermediate_size next to the routed ones
    moe_layers = _moe_layers(read, model_type, layers)
    dense_layers = layers - moe_layers
    routed_active = min(top_k, experts) * expert_ffn
    active = moe_layers * mats * d * (routed_active + shared) + dense_layers * mats * d * dense_ffn
    total = moe_layers * mats * d * (experts * expert_ffn + shared) + dense_layers * mats * d * dense_ffn
    return active, total, moe_layers * d * experts


def _moe_layers(read: _Reader, model_type: str, layers: int) -> int:
    """How many layers hold experts (the rest are dense)."""
    first_dense = min(layers, read.size("first_k_dense_replace", default=0, zero=True))
    if model_type == "llama4_text":
        step = read.size("interleave_moe_layer_step", default=1)
        return sum(1 for i in range(layers) if (i + 1) % step == 0)
    step = read.size("decoder_sparse_step", "moe_layer_freq", default=1)
    only_mlp = set(read.config.get("mlp_only_layers") or [])
    return sum(1 for i in range(first_dense, layers) if i not in only_mlp and (i + 1) % step == 0) if step else 0


def _sliding(config: dict, read: _Reader, model_type: str, layers: int) -> tuple[int, int | None]:
    """(layers that attend in a sliding window, the window)."""
    raw = config.get("sliding_window")
    window = read.size("sliding_window", default=None, zero=True) if not isinstance(raw, bool) else None
    if not window:
        return 0, None
    kinds = config.get("layer_types")
    if isinstance(kinds, list) and kinds:
        return sum(1 for k in kinds if k == "sliding_attention"), window
    if model_type == "gemma2":
        return (layers + 1) // 2, window  # Gemma2DecoderLayer: even layers slide
    if model_type in ("gemma3", "gemma3_text"):
        pattern = read.size("sliding_window_pattern", default=6)
        return sum(1 for i in range(layers) if (i + 1) % pattern), window
    if model_type in ("mistral", "mixtral") or (model_type.startswith("qwen") and config.get("use_sliding_window")):
        return layers, window
    return 0, None
