"""Model configs read right: the parameter count computed from a real config.json (copied, or its sizes transcribed)
equals its publisher's count.

The configs are recorded with their source (tests/fixtures/timing/model_configs.json, tools/record_model_configs.py);
the published counts come with theirs. Totals must agree within 0.5%. Activated counts of MoE models are published
rounded (or cut) to two or three digits, so they must agree within one unit of the last published digit."""

import json
from pathlib import Path

import pytest

from trainsteps.timing.architectures import shape_from_config
from trainsteps.timing.flops import attention_flops, train_flops_per_token

MODELS = json.loads((Path(__file__).parents[1] / "fixtures" / "timing" / "model_configs.json").read_text())["models"]


def _rounding(value: float) -> float:
    """One unit of the last digit a count like 2.7e9, 12.9e9 or 5.13e9 is published with (DeepSeek-V2-Lite's 2.45 G
    is published as 2.4B: cut, not rounded)."""
    text = f"{value / 1e9:g}"
    decimals = len(text.split(".")[1]) if "." in text else 0
    return 10 ** -decimals * 1e9


@pytest.mark.parametrize("model", MODELS, ids=[m["name"] for m in MODELS])
def test_the_parameter_count_from_config_json_equals_the_published_count(model):
    shape = shape_from_config(model["config"], model["name"])
    published = model["published"]["total"]
    assert abs(shape.total_params / published - 1) <= 0.005, (shape.total_params, published, model["published"]["source"])
    assert shape.notes == ()


MOE = [m for m in MODELS if m["published"]["active"]]


@pytest.mark.parametrize("model", MOE, ids=[m["name"] for m in MOE])
def test_an_moe_models_activated_parameters_equal_the_published_count(model):
    shape = shape_from_config(model["config"], model["name"])
    published = model["published"]["active"]
    # "with_embeddings": every parameter a token touches; "without_embedding": the multiplying ones (the LM head counts)
    ours = shape.active_params if model["published"]["active_counts"] == "with_embeddings" else shape.matmul_params
    assert abs(ours - published) <= _rounding(published), (ours, published, model["published"]["source"])
    assert shape.total_params > 2 * ours


def _config(name: str) -> dict:
    return next(m["config"] for m in MODELS if m["name"] == name)


def test_qwen_1_halves_its_intermediate_size_as_its_model_code_does():
    config = _config("Qwen/Qwen-1_8B-Chat")
    halved = shape_from_config(config)
    as_llama = shape_from_config({**config, "model_type": "llama"})
    assert as_llama.matmul_params - halved.matmul_params == pytest.approx(24 * 3 * 2048 * 11008 / 2)


def test_an_unknown_model_type_is_read_as_a_llama_decoder_and_says_so():
    shape = shape_from_config({**_config("meta-llama/Llama-2-7b-hf"), "model_type": "brand_new"}, "config.json")
    assert shape.total_params == shape_from_config(_config("meta-llama/Llama-2-7b-hf")).total_params
    assert shape.notes[0][0] == "time.note.model_type_generic"
    assert shape.notes[0][1]["model_type"] == "brand_new"


def test_sliding_window_layers_attend_less_than_full_layers_at_long_rows():
    gemma2 = shape_from_config(_config("google/gemma-2-9b"))
    assert (gemma2.sliding_layers, gemma2.sliding_window) == (21, 4096)
    full = shape_from_config({**_config("google/gemma-2-9b"), "model_type": "llama", "sliding_window": None})
    assert attention_flops(gemma2, 2048) == attention_flops(full, 2048)  # rows inside the window: no difference
    # half the layers attend 16384 / 2 on average, the other half 4096 - 4096² / (2 x 16384) = 3584
    assert attention_flops(gemma2, 16384) / attention_flops(full, 16384) == pytest.approx((8192 + 3584) / (2 * 8192))


def test_deepseek_latent_attention_is_counted_at_its_own_head_widths():
    shape = shape_from_config(_config("deepseek-ai/DeepSeek-V2-Lite"))
    assert shape.attention_width == 16 * (128 + 64 + 128) // 2  # QKᵀ at nope+rope, AV at v_head_dim
    assert train_flops_per_token(shape, 4096).expected > 6 * shape.matmul_params


def test_a_vision_language_config_is_read_at_its_text_tower():
    text = _config("meta-llama/Llama-3.1-8B")
    shape = shape_from_config({"model_type": "llava", "text_config": text, "vision_config": {"hidden_size": 1024}})
    assert shape.total_params == shape_from_config(text).total_params
