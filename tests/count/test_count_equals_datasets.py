"""`trainsteps count` gives the same numbers as `datasets` + the same tokenizer, in every file format it reads.

The reference side loads each file with `datasets.load_dataset` (or `load_from_disk`) and tokenizes with
`tokenizers.Tokenizer.encode_batch`; the rendering of chat rows is written out here as the spec of docs/count.md.
"""

import gzip
import json

import pytest

from trainsteps.data.count import CountOptions, count

from .conftest import alpaca_rows, sharegpt_rows, text_rows, write_jsonl

datasets = pytest.importorskip("datasets")
tokenizers = pytest.importorskip("tokenizers")


def reference_text_lengths(dataset, tokenizer_path, column="text", add_special_tokens=True):
    tok = tokenizers.Tokenizer.from_file(str(tokenizer_path))
    return [len(e) for e in tok.encode_batch(list(dataset[column]), add_special_tokens=add_special_tokens)]


def chatml_alpaca(row):
    """(prompt, response) text of an alpaca row under the chatml template: LLaMA-Factory joins instruction and input with a newline."""
    query = "\n".join(x for x in (row["instruction"], row["input"]) if x)
    return f"<|im_start|>user\n{query}<|im_end|>\n<|im_start|>assistant\n", f"{row['output']}<|im_end|>\n"


def ours(paths, tokenizer_path, **kw):
    counted = count(CountOptions([str(p) for p in paths], str(tokenizer_path), progress=False, **kw))
    return counted, counted.lengths.tokens.tolist(), counted.lengths.supervised.tolist()


def test_jsonl_text_tokens_equal_datasets_plus_tokenizer(tmp_path, tokenizer_path):
    path = write_jsonl(tmp_path / "train.jsonl", text_rows(2300))
    expected = reference_text_lengths(datasets.load_dataset("json", data_files=str(path), split="train"), tokenizer_path)
    counted, tokens, supervised = ours([path], tokenizer_path)
    assert counted.examples == len(expected) == 2300
    assert tokens == expected
    assert supervised == expected  # plain text: every token is trained on


@pytest.mark.parametrize("layout", ["json_array", "csv", "parquet", "gzip", "zstd", "folder_glob"])
def test_every_file_format_counts_like_datasets(tmp_path, layout):
    from .conftest import TINY_TOKENIZER

    rows = text_rows(1500, seed=3)
    if layout == "json_array":
        path = tmp_path / "train.json"
        path.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
        reference = datasets.load_dataset("json", data_files=str(path), split="train")
        given = [path]
    elif layout == "csv":
        path = tmp_path / "train.csv"
        datasets.Dataset.from_list(rows).to_csv(str(path), index=False)
        reference = datasets.load_dataset("csv", data_files=str(path), split="train")
        given = [path]
    elif layout == "parquet":
        path = tmp_path / "train.parquet"
        datasets.Dataset.from_list(rows).to_parquet(str(path))
        reference = datasets.load_dataset("parquet", data_files=str(path), split="train")
        given = [path]
    elif layout == "gzip":
        path = tmp_path / "train.jsonl.gz"
        with gzip.open(path, "wt", encoding="utf-8") as f:
            f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
        reference = datasets.load_dataset("json", data_files=str(path), split="train")
        given = [path]
    elif layout == "zstd":
        zstandard = pytest.importorskip("zstandard")
        path = tmp_path / "train.jsonl.zst"
        path.write_bytes(zstandard.ZstdCompressor().compress("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()))
        reference = datasets.load_dataset("json", data_files=str(path), split="train")
        given = [path]
    else:
        folder = tmp_path / "shards"
        folder.mkdir()
        for i in range(3):
            write_jsonl(folder / f"part-{i}.jsonl", rows[i * 500:(i + 1) * 500])
        reference = datasets.load_dataset("json", data_files=sorted(str(p) for p in folder.glob("*.jsonl")), split="train")
        given = [str(folder / "*.jsonl")]
    _, tokens, _ = ours(given, TINY_TOKENIZER)
    assert tokens == reference_text_lengths(reference, TINY_TOKENIZER)


def test_save_to_disk_folders_and_splits_count_like_load_from_disk(tmp_path):
    from .conftest import TINY_TOKENIZER

    dd = datasets.DatasetDict({"train": datasets.Dataset.from_list(text_rows(1200, seed=5)),
                               "test": datasets.Dataset.from_list(text_rows(70, seed=6))})
    dd["train"].save_to_disk(str(tmp_path / "one"), max_shard_size="20KB")
    dd.save_to_disk(str(tmp_path / "both"))
    assert ours([tmp_path / "one"], TINY_TOKENIZER)[1] == reference_text_lengths(
        datasets.load_from_disk(str(tmp_path / "one")), TINY_TOKENIZER)
    assert ours([tmp_path / "both"], TINY_TOKENIZER, split="test")[1] == reference_text_lengths(
        datasets.load_from_disk(str(tmp_path / "both"))["test"], TINY_TOKENIZER)


def test_alpaca_rows_are_rendered_conversations_with_the_response_supervised(tmp_path, tokenizer_path):
    path = write_jsonl(tmp_path / "alpaca.jsonl", alpaca_rows(1100))
    reference = datasets.load_dataset("json", data_files=str(path), split="train")
    tok = tokenizers.Tokenizer.from_file(str(tokenizer_path))
    prompts, responses = zip(*(chatml_alpaca(r) for r in reference), strict=False)
    p = [len(e) for e in tok.encode_batch(list(prompts), add_special_tokens=False)]
    r = [len(e) for e in tok.encode_batch(list(responses), add_special_tokens=False)]
    counted, tokens, supervised = ours([path], tokenizer_path)
    assert counted.row_format.startswith("alpaca")
    assert tokens == [a + b for a, b in zip(p, r, strict=False)]
    assert supervised == r


def test_sharegpt_turns_alternate_and_every_assistant_turn_is_supervised(tmp_path):
    from .conftest import TINY_TOKENIZER

    rows = sharegpt_rows(600, seed=2)
    path = write_jsonl(tmp_path / "chat.jsonl", rows)
    tok = tokenizers.Tokenizer.from_file(str(TINY_TOKENIZER))

    def n(text):
        return len(tok.encode(text, add_special_tokens=False)) if text else 0

    expected_tokens, expected_supervised = [], []
    for row in datasets.load_dataset("json", data_files=str(path), split="train"):
        turns = row["conversations"]
        head = ""
        if turns[0]["from"] == "system":
            head, turns = f"<|im_start|>system\n{turns[0]['value']}<|im_end|>\n", turns[1:]
        total = sup = 0
        for user, gpt in zip(turns[::2], turns[1::2], strict=False):
            total += n(head + f"<|im_start|>user\n{user['value']}<|im_end|>\n<|im_start|>assistant\n")
            head = ""
            answer = n(f"{gpt['value']}<|im_end|>\n")
            total, sup = total + answer, sup + answer
        expected_tokens.append(total)
        expected_supervised.append(sup)
    counted, tokens, supervised = ours([path], TINY_TOKENIZER)
    assert counted.row_format.startswith("sharegpt")
    assert (tokens, supervised) == (expected_tokens, expected_supervised)


def test_text_files_count_one_row_per_line_like_the_text_loader(tmp_path):
    from .conftest import TINY_TOKENIZER

    path = tmp_path / "corpus.txt"
    path.write_text("".join(r["text"] + "\n" for r in text_rows(800, seed=8)), encoding="utf-8")
    reference = datasets.load_dataset("text", data_files=str(path), split="train")
    assert ours([path], TINY_TOKENIZER)[1] == reference_text_lengths(reference, TINY_TOKENIZER)


def test_openai_messages_render_like_sharegpt_with_role_and_content(tmp_path):
    from .conftest import TINY_TOKENIZER

    rows = [{"messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi there"},
                          {"role": "assistant", "content": "hello"}, {"role": "user", "content": "how many steps"},
                          {"role": "assistant", "content": "ten"}]}] * 40
    path = write_jsonl(tmp_path / "chat.jsonl", rows)
    tok = tokenizers.Tokenizer.from_file(str(TINY_TOKENIZER))

    def n(text):
        return len(tok.encode(text, add_special_tokens=False))

    prompt1 = "<|im_start|>system\nbe brief<|im_end|>\n<|im_start|>user\nhi there<|im_end|>\n<|im_start|>assistant\n"
    prompt2 = "<|im_start|>user\nhow many steps<|im_end|>\n<|im_start|>assistant\n"
    answers = n("hello<|im_end|>\n") + n("ten<|im_end|>\n")
    counted, tokens, supervised = ours([path], TINY_TOKENIZER)
    assert counted.row_format.startswith("openai") and len(datasets.load_dataset("json", data_files=str(path), split="train")) == 40
    assert set(tokens) == {n(prompt1) + n(prompt2) + answers} and set(supervised) == {answers}
