"""Build tests/assets/tiny_tokenizer.json: a small byte-level BPE tokenizer (a few KB) for the count tests.

It has the chat markers of the chatml template as special tokens and adds `<s>` to every sequence, so tests see
special-token handling. Deterministic: same corpus, same merges. Run: python tools/make_tiny_tokenizer.py
"""

from pathlib import Path

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

CORPUS = [
    "the quick brown fox jumps over the lazy dog",
    "how many steps does a training run take",
    "examples tokens and packed sequences of a dataset",
    "please write a short answer to the question below",
    "模型训练的步数 数据集 样本",
] * 20


def main() -> None:
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=["<s>", "</s>", "<|im_start|>", "<|im_end|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tokenizer.train_from_iterator(CORPUS, trainer)
    tokenizer.post_processor = processors.TemplateProcessing(single="<s> $A", pair="<s> $A <s> $B", special_tokens=[("<s>", 0)])
    out = Path(__file__).resolve().parents[1] / "tests" / "assets" / "tiny_tokenizer.json"
    tokenizer.save(str(out), pretty=False)
    print(out, out.stat().st_size, "bytes")


if __name__ == "__main__":
    main()
