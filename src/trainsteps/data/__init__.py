"""Count the examples, tokens and packed sequences of a training set, as each framework will see it.

Heavy libraries (pyarrow, tokenizers, numpy, zstandard, ray) are imported inside the functions that use them,
so `import trainsteps.data` stays light. Layout:

- `sources`  : paths, globs, folders, `save_to_disk` folders and LLaMA-Factory `dataset_info.json` entries -> `Source`s
- `readers`  : rows out of JSONL / JSON / CSV / Parquet / Arrow files (gzip, zstd), malformed lines recorded
- `formats`  : a row -> the text segments a framework tokenizes (plain text, alpaca, sharegpt, openai messages)
- `tokenize` : lengths of many segments at once with a local `tokenizers` tokenizer
- `stats`    : totals, percentiles, histogram, cutoff effects
- `packing`  : the packing algorithms of LLaMA-Factory, TRL, ms-swift and Axolotl on a list of lengths
- `sample`   : estimate with a confidence interval from random rows, by seeking
- `count`    : the whole count, as one `CountReport`
- `idx`      : Megatron / GPT-NeoX `.bin/.idx` files (numpy memmap)
"""
