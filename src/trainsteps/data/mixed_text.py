"""A deterministic sample of mixed text (English, Chinese, code, emoji, numbers, odd whitespace) for checking that two
tokenizers split text the same way.

The rows are built from a seeded generator, so the same seed gives the same rows on every machine and every Python
release: nothing is read from the installed Python or the network. The mix leans on what tells byte-level BPE
implementations apart: the pre-tokenizer regex (contractions, digit runs, punctuation runs, whitespace before
newlines, trailing spaces), multi-byte UTF-8 (CJK, emoji with skin tones and ZWJ sequences, combining marks, text that
NFC normalization changes), and special tokens written inside the text.
"""

from __future__ import annotations

import random

ENGLISH = (
    "the of and to in a is that for it as was with be by on not he this are or his from at which but have an they "
    "you were her she there been one all we their has would when if so no will more can out who up what about time "
    "training steps model data epoch batch token sequence gradient accumulation learning rate warmup checkpoint "
    "Transformer Llama Qwen DeepSeek GPU CUDA PyTorch JSON API HTTP URL README LoRA QLoRA RLHF DPO PPO GRPO "
    "don't can't won't it's I'm you're we've they'll she'd THE'S It'S O'Neil rock'n'roll naïve café résumé "
    "coöperate Zürich Ελληνικά русский язык العربية हिन्दी 한국어 日本語 Tiếng Việt ไทย"
).split()
CHINESE = (
    "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所"
    "民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日"
    "那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想"
    "已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指"
    "模型训练数据样本批次步骤学习率梯度累积检查点分词器语料中文英文测试"
)
CJK_PUNCT = "，。！？、；：“”‘’（）【】《》…—～·「」『』"
JAPANESE = "ひらがなカタカナこんにちは世界ありがとうございますトークナイザー"
EMOJI = ["😀", "😂", "🥲", "🤖", "🚀", "🔥", "✨", "👍", "👍🏽", "👩‍💻", "👨‍👩‍👧‍👦", "🏳️‍🌈", "❤️", "🇨🇳", "🇺🇸", "🧪",
         "📈", "⚠️", "✅", "❌", "🙏🏻", "🫠", "💯", "🎉", "☕", "🐍", "🦀", "1️⃣", "©", "™"]
CODE = [
    "def {n}(self, x: int = {d}) -> list[int]:\n    return [i ** 2 for i in range(x)]  # {w}\n",
    "for (int i = 0; i < {d}; ++i) {{\n\tsum += a[i] * b[i];\n}}\n",
    "const {n} = async (req, res) => {{ await res.json({{ ok: true, count: {d} }}); }};\n",
    "SELECT id, name FROM users WHERE age >= {d} AND name LIKE '%{w}%';\n",
    "<div class=\"{w}\"><span>{d}</span></div>\n",
    "if __name__ == \"__main__\":\n    main(sys.argv[1:])\n",
    "fn {n}(v: &[u8]) -> Result<usize, Error> {{ Ok(v.len() + {d}) }}\n",
    "    {n}_{w} = np.zeros(({d}, {d}), dtype=np.float32)\n",
    "$ torchrun --nproc_per_node {d} train.py --lr 3e-4 --{w}\n",
    "{{\"{w}\": [{d}, {d}.5, -1e-9, null, true], \"path\": \"C:\\\\Users\\\\{n}\"}}\n",
]
ODD = ["  ", "   ", "\t", "\n", "\n\n", "\r\n", " \n ", "\u00a0", "\u3000", "\u200b", "e\u0301", "A\u030a", "\ufb01",
       "\uff21\uff22\uff23", "１２３", "ℌ", "x²", "½", "...", "!!!", "?!", "---", "***", "'''", "\"\"", "''s", "'S",
       "http://example.com/a?b=1&c=2", "user@example.org", "3.14159", "1,234,567", "0x1F", "2026-11-24T12:00:00Z",
       "$100", "50%", "#hashtag", "@mention", "~/path/to/file.py", "a\\b", "Ⅻ", "ǅ", "\ufeff", "\x00", "\x7f"]


def rows(n: int, seed: int = 0, specials: tuple[str, ...] = (), max_parts: int = 12) -> list[str]:
    """`n` rows of mixed text, each of 1 to `max_parts` pieces; `specials` (a tokenizer's added tokens) are written
    into some of them."""
    rng = random.Random(seed)
    return [_row(rng, specials, max_parts) for _ in range(n)]


def _row(rng: random.Random, specials: tuple[str, ...], max_parts: int) -> str:
    parts = []
    for _ in range(rng.randint(1, max_parts)):
        kind = rng.random()
        if kind < 0.32:
            words = rng.choices(ENGLISH, k=rng.randint(1, 25))
            if rng.random() < 0.3:
                words[0] = words[0].capitalize()
            parts.append(" ".join(words) + rng.choice([".", ",", "!", "?", "", ":", ";", " "]))
        elif kind < 0.55:
            parts.append("".join(rng.choices(CHINESE, k=rng.randint(1, 40))) + rng.choice(CJK_PUNCT))
        elif kind < 0.60:
            parts.append("".join(rng.choices(JAPANESE, k=rng.randint(1, 15))))
        elif kind < 0.72:
            parts.append(rng.choice(CODE).format(n=rng.choice(["f", "load_data", "fooBar", "_x1", "计算"]),
                                                 d=rng.randint(0, 10**rng.randint(1, 9)), w=rng.choice(ENGLISH)))
        elif kind < 0.82:
            parts.append("".join(rng.choices(EMOJI, k=rng.randint(1, 6))))
        elif kind < 0.90:
            parts.append(str(rng.randint(0, 10**rng.randint(1, 15))) + rng.choice(["", " ", ".", "-", "000"]))
        elif kind < 0.98 or not specials:
            parts.append(rng.choice(ODD))
        else:
            parts.append(rng.choice(specials))
    return rng.choice(["", " ", "  ", "\n"]).join(parts) + rng.choice(["", "", " ", "\n", "  \n", "\t"])
