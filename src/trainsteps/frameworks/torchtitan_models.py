"""torchtitan's model flavors (`[model] name` and `flavor` of a job .toml) as the config.json fields the FLOPs model reads.

The flavors are recorded from the release's own source by tools/record_torchtitan_flavors.py into
data/torchtitan_flavors.json (each flavor's literal arguments, its dataclass's defaults and MoEArgs' defaults); this
module turns one into a Hugging Face-style config for timing.architectures.shape_from_config, by the rules of
torchtitan's model code:
- llama3 (models/llama3/model/model.py `FeedForward`): the MLP width is 2/3 of 4 x dim, times `ffn_dim_multiplier`,
  rounded up to `multiple_of`; `n_kv_heads` None is `n_heads`; embeddings and output untied.
- qwen3 (models/qwen3): `hidden_dim` is the MLP width, `head_dim` given, `enable_weight_tying`; with `moe_enabled`,
  every layer is a MoE of `moe_args.num_experts` experts of `moe_inter_dim`, `top_k` routed, `num_shared_experts` shared.
"""

from __future__ import annotations

import functools
import json
from importlib import resources

from trainsteps.errors import InputError


@functools.cache
def _table() -> dict:
    return json.loads(resources.files("trainsteps").joinpath("data/torchtitan_flavors.json").read_text())


def flavor_config(name: str, flavor: str) -> tuple[dict, str]:
    """(config.json fields, where they came from) of a torchtitan model flavor; one line naming the known ones if not."""
    table = _table()
    models = table["models"]
    if name not in models:
        raise InputError("tt.error.model_name", "tt.hint.model_name", name=str(name)[:40], known=", ".join(sorted(models)))
    model = models[name]
    if flavor not in model["flavors"]:
        raise InputError("tt.error.flavor", "tt.hint.flavor", name=name, flavor=str(flavor)[:40],
                         known=", ".join(sorted(model["flavors"])))
    args = {**model["defaults"], **model["flavors"][flavor]}
    config = _llama3(args) if name == "llama3" else _qwen3(args, table["moe_args"]["defaults"])
    return config, f"torchtitan {table['release']} {model['file']}: {name} {flavor}"


def _llama3(args: dict) -> dict:
    dim, multiple = args["dim"], args["multiple_of"]
    hidden = int(2 * (4 * dim) / 3)
    if args.get("ffn_dim_multiplier") is not None:
        hidden = int(args["ffn_dim_multiplier"] * hidden)
    hidden = multiple * ((hidden + multiple - 1) // multiple)
    return {"model_type": "llama", "hidden_size": dim, "num_hidden_layers": args["n_layers"],
            "num_attention_heads": args["n_heads"], "num_key_value_heads": args.get("n_kv_heads") or args["n_heads"],
            "intermediate_size": hidden, "vocab_size": args["vocab_size"], "tie_word_embeddings": False}


def _qwen3(args: dict, moe_defaults: dict) -> dict:
    config = {"model_type": "qwen3", "hidden_size": args["dim"], "num_hidden_layers": args["n_layers"],
              "num_attention_heads": args["n_heads"], "num_key_value_heads": args["n_kv_heads"], "head_dim": args["head_dim"],
              "intermediate_size": args["hidden_dim"], "vocab_size": args["vocab_size"],
              "tie_word_embeddings": bool(args.get("enable_weight_tying"))}
    if args.get("moe_enabled"):
        moe = {**moe_defaults, **(args.get("moe_args") or {})}
        config.update(model_type="qwen3_moe", num_experts=moe["num_experts"], num_experts_per_tok=moe["top_k"],
                      moe_intermediate_size=args["moe_inter_dim"],
                      shared_expert_intermediate_size=moe["num_shared_experts"] * args["moe_inter_dim"])
    return config
