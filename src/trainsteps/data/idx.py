"""Read (and, for tests and benchmarks, write) Megatron / GPT-NeoX `.bin` + `.idx` token datasets.

The `.idx` layout (megatron-core `indexed_dataset.py`, NeoX `MMapIndexedDataset`, legacy Megatron), little-endian:

    offset        size  field
    0             9     magic b"MMIDIDX\\x00\\x00"
    9             8     <Q version (1)
    17            1     <B dtype code of the tokens in .bin
    18            8     <Q sequence count n
    26            8     <Q document count d (documents + 1)
    34            4n    int32 sequence lengths (tokens per sequence)
    34+4n         8n    int64 sequence pointers (byte offset of each sequence in .bin)
    34+12n        8d    int64 document indices ([0, end sequence of doc 0, ...])
    34+12n+8d     n     int8 sequence modes (multimodal datasets only)

numpy is needed (the `data` extra) and imported lazily. The lengths are read in fixed-size
chunks into one reused buffer, so memory stays flat however large the file is. Nothing
from Megatron is imported.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from trainsteps.errors import InputError

MAGIC = b"MMIDIDX\x00\x00"
LEGACY_CACHED_MAGIC = b"TNTIDX\x00\x00"
HEADER_SIZE = 34
CHUNK = 1 << 22  # sequences per pass step: 16 MiB of int32 lengths
PERCENTILE_SAMPLE = 1 << 22  # up to this many lengths are counted exactly; larger files use an evenly strided sample

# megatron-core DType codes. GPT-NeoX (fairseq lineage) swaps 6 and 7 (6 float32, 7 float64).
DTYPE_NAMES = {1: "uint8", 2: "int8", 3: "int16", 4: "int32", 5: "int64", 6: "float64", 7: "float32", 8: "uint16"}
DTYPE_SIZES = {1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 6: 8, 7: 4, 8: 2}
EXACT_PERCENTILE_LIMIT = 1 << 20  # lengths below this are counted exactly; longer ones by 2**k buckets


@dataclass(slots=True)
class IdxHeader:
    """The fixed part of an `.idx` file."""

    path: str
    """The `.idx` file."""
    version: int
    """Format version (always 1 so far)."""
    dtype_code: int
    """Token dtype code (megatron-core numbering)."""
    num_sequences: int
    """Sequences (rows of `sequence_lengths`); the unit Megatron and NeoX split and count "documents" in."""
    document_count: int
    """Entries of `document_indices` (documents + 1)."""
    multimodal: bool
    """True when a trailing int8 sequence-mode array is present."""

    @property
    def num_documents(self) -> int:
        return max(0, self.document_count - 1)

    @property
    def dtype(self) -> str:
        return DTYPE_NAMES[self.dtype_code]

    @property
    def itemsize(self) -> int:
        return DTYPE_SIZES[self.dtype_code]


@dataclass(slots=True)
class IdxSummary:
    """What a `.bin/.idx` pair holds."""

    path_prefix: str
    """Path without `.idx` / `.bin`."""
    dtype: str
    """Token dtype (`uint16` when the vocabulary has fewer than 65,500 ids, else `int32`)."""
    num_documents: int
    """Documents (`document_count - 1`)."""
    num_sequences: int
    """Sequences; equal to documents unless preprocessing split sentences."""
    num_tokens: int
    """Tokens in all sequences."""
    min_length: int
    """Shortest sequence, in tokens."""
    max_length: int
    """Longest sequence, in tokens."""
    mean_length: float
    """Mean sequence length."""
    percentiles: dict[str, int]
    """Sequence-length percentiles p10, p50, p90, p99 (nearest rank)."""
    percentiles_exact: bool
    """False when the percentiles come from an evenly strided sample of 4,194,304 lengths (larger files) or some
    sequence is longer than 2**20 tokens (long lengths are then bucketed by powers of two)."""
    bin_bytes: int | None
    """Size of the `.bin` file, if present."""
    chunk_prefix: list[int] = field(default_factory=list, repr=False)
    """Tokens before each chunk of CHUNK sequences (for fast range sums)."""

    def to_dict(self) -> dict:
        return {
            "path_prefix": self.path_prefix,
            "dtype": self.dtype,
            "num_documents": self.num_documents,
            "num_sequences": self.num_sequences,
            "num_tokens": self.num_tokens,
            "min_length": self.min_length,
            "max_length": self.max_length,
            "mean_length": round(self.mean_length, 3),
            "percentiles": dict(self.percentiles),
            "percentiles_exact": self.percentiles_exact,
            "bin_bytes": self.bin_bytes,
        }


def _idx_path(prefix: str) -> str:
    return prefix if prefix.endswith(".idx") else prefix + ".idx"


def _prefix(path: str) -> str:
    return path[:-4] if path.endswith((".idx", ".bin")) else path


def read_header(path_prefix: str) -> IdxHeader:
    """Read and check the header and the file size; raise InputError naming what is wrong."""
    path = _idx_path(_prefix(path_prefix))
    if not os.path.isfile(path):
        raise InputError("idx.error.missing", "idx.hint.missing", path=path)
    size = os.path.getsize(path)
    with open(path, "rb") as stream:
        head = stream.read(HEADER_SIZE)
    if head.startswith(LEGACY_CACHED_MAGIC):
        raise InputError("idx.error.legacy_cached", "idx.hint.legacy_cached", path=path)
    if len(head) < HEADER_SIZE:
        raise InputError("idx.error.short_header", "idx.hint.corrupt", path=path, size=size, need=HEADER_SIZE)
    if head[:9] != MAGIC:
        raise InputError("idx.error.magic", "idx.hint.corrupt", path=path, found=head[:9].hex())
    version = struct.unpack_from("<Q", head, 9)[0]
    code = head[17]
    n, d = struct.unpack_from("<QQ", head, 18)
    if version != 1:
        raise InputError("idx.error.version", "idx.hint.corrupt", path=path, version=version)
    if code not in DTYPE_NAMES:
        raise InputError("idx.error.dtype", "idx.hint.corrupt", path=path, code=code)
    expected = HEADER_SIZE + 12 * n + 8 * d
    if size < expected:
        raise InputError("idx.error.truncated", "idx.hint.corrupt", path=path, size=size, expected=expected,
                         sequences=n, documents=d)
    if size not in (expected, expected + n):
        raise InputError("idx.error.trailing", "idx.hint.corrupt", path=path, size=size, expected=expected, extra=size - expected)
    return IdxHeader(path, version, code, n, d, multimodal=(size == expected + n and n > 0))


class IdxReader:
    """Chunked access to an `.idx` file's arrays without loading them whole."""

    def __init__(self, path_prefix: str):
        self.prefix = _prefix(path_prefix)
        self.header = read_header(self.prefix)
        self._summary: IdxSummary | None = None

    @property
    def num_sequences(self) -> int:
        return self.header.num_sequences

    def _read_int32(self, begin: int, count: int):
        import numpy as np

        out = np.empty(count, dtype=np.int32)
        with open(self.header.path, "rb") as stream:
            stream.seek(HEADER_SIZE + 4 * begin)
            got = stream.readinto(memoryview(out).cast("B"))
        if got != 4 * count:
            raise InputError("idx.error.truncated", "idx.hint.corrupt", path=self.header.path, size=os.path.getsize(self.header.path),
                             expected=HEADER_SIZE + 4 * (begin + count), sequences=self.header.num_sequences,
                             documents=self.header.document_count)
        return out

    def _read_int64(self, offset: int, count: int):
        import numpy as np

        with open(self.header.path, "rb") as stream:
            stream.seek(offset)
            data = stream.read(8 * count)
        return np.frombuffer(data, dtype="<i8", count=count)

    def lengths(self, begin: int = 0, end: int | None = None):
        """Sequence lengths [begin, end) as a numpy array (reads only that range)."""
        end = self.header.num_sequences if end is None else end
        return self._read_int32(begin, max(0, end - begin))

    def summary(self) -> IdxSummary:
        """Counts, dtype and length percentiles in one chunked pass; checked against the `.bin` size."""
        if self._summary is None:
            self._summary = self._summarise()
        return self._summary

    def tokens(self, begin: int, end: int) -> int:
        """Tokens in sequences [begin, end), from chunk prefix sums plus at most two partial chunks."""
        prefix = self.summary().chunk_prefix
        return self._prefix_tokens(end, prefix) - self._prefix_tokens(begin, prefix)

    def _prefix_tokens(self, i: int, prefix: list[int]) -> int:
        import numpy as np

        chunk, rest = divmod(i, CHUNK)
        if chunk >= len(prefix):
            return prefix[-1]
        partial = self._read_int32(chunk * CHUNK, rest) if rest else np.zeros(0, np.int32)
        return prefix[chunk] + int(partial.sum(dtype=np.int64))

    def _summarise(self) -> IdxSummary:
        import mmap

        import numpy as np

        h = self.header
        n = h.num_sequences
        total, low, high = 0, None, 0
        prefix = [0]
        step = max(1, -(-n // PERCENTILE_SAMPLE))  # every step-th length goes into the percentile histogram
        counts = np.zeros(0, dtype=np.int64)
        long_counts = np.zeros(64, dtype=np.int64)
        negative = None
        with open(h.path, "rb") as stream, mmap.mmap(stream.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            for begin in range(0, n, CHUNK):
                count = min(CHUNK, n - begin)
                part = np.frombuffer(mapped, dtype="<i4", count=count, offset=HEADER_SIZE + 4 * begin)
                part_min, part_max = int(part.min()), int(part.max())
                if part_min < 0:
                    negative = begin + int(np.argmin(part))
                    del part
                    break
                total += int(part.sum(dtype=np.int64))
                prefix.append(total)
                low = part_min if low is None else min(low, part_min)
                high = max(high, part_max)
                first = (-begin) % step
                counts, long_counts = _histogram(part[first::step], counts, long_counts)
                del part
                _release(mapped, HEADER_SIZE + 4 * begin, 4 * count)
        if negative is not None:
            raise InputError("idx.error.negative_length", "idx.hint.corrupt", path=h.path, index=negative)
        self._check_document_indices()
        bin_bytes = self._check_bin(total)
        sampled = int(counts.sum() + long_counts.sum())
        return IdxSummary(
            path_prefix=self.prefix, dtype=h.dtype, num_documents=h.num_documents, num_sequences=n, num_tokens=total,
            min_length=low or 0, max_length=high, mean_length=total / n if n else 0.0,
            percentiles=_percentiles(counts, long_counts, sampled),
            percentiles_exact=step == 1 and not long_counts.any(), bin_bytes=bin_bytes, chunk_prefix=prefix,
        )

    def _check_document_indices(self) -> None:
        h = self.header
        if h.document_count == 0:
            raise InputError("idx.error.documents", "idx.hint.corrupt", path=h.path, first="-", last="-", sequences=h.num_sequences)
        offset = HEADER_SIZE + 12 * h.num_sequences
        first = int(self._read_int64(offset, 1)[0])
        last = int(self._read_int64(offset + 8 * (h.document_count - 1), 1)[0])
        if first != 0 or last != h.num_sequences:
            raise InputError("idx.error.documents", "idx.hint.corrupt", path=h.path, first=first, last=last, sequences=h.num_sequences)

    def _check_bin(self, total_tokens: int) -> int | None:
        path = self.prefix + ".bin"
        if not os.path.isfile(path):
            return None
        size = os.path.getsize(path)
        expected = total_tokens * self.header.itemsize
        if size != expected:
            raise InputError("idx.error.bin_size", "idx.hint.bin_size", path=path, size=size, expected=expected,
                             tokens=total_tokens, dtype=self.header.dtype)
        return size


def _histogram(values, counts, long_counts):
    """Add `values` to an exact histogram of lengths below 2**20 and power-of-two buckets of longer ones."""
    import numpy as np

    if values.size and int(values.max()) >= EXACT_PERCENTILE_LIMIT:
        long = values[values >= EXACT_PERCENTILE_LIMIT]
        long_counts = long_counts + np.bincount(np.log2(long).astype(np.int64), minlength=64)[:64]
        values = values[values < EXACT_PERCENTILE_LIMIT]
    hist = np.bincount(values, minlength=counts.size)
    if hist.size > counts.size:
        hist[: counts.size] += counts
        return hist, long_counts
    counts[: hist.size] += hist
    return counts, long_counts


def _release(mapped, offset: int, length: int) -> None:
    """Drop the pages just read from this process (they stay in the page cache), so memory does not grow with the file."""
    import mmap

    if not hasattr(mmap, "MADV_DONTNEED"):
        return
    page = mmap.PAGESIZE
    start = offset - offset % page
    try:
        mapped.madvise(mmap.MADV_DONTNEED, start, offset + length - start)
    except (OSError, ValueError):
        pass


def _percentiles(counts, long_counts, n: int) -> dict[str, int]:
    """Nearest-rank percentiles from an exact histogram of short lengths and power-of-two buckets of long ones."""
    import numpy as np

    if n == 0:
        return {}
    cumulative = np.cumsum(counts)
    out = {}
    for p in (10, 50, 90, 99):
        rank = max(1, -(-p * n // 100))
        if cumulative.size and cumulative[-1] >= rank:
            out[f"p{p}"] = int(np.searchsorted(cumulative, rank))
        else:
            remaining = rank - (int(cumulative[-1]) if cumulative.size else 0)
            bucket = int(np.searchsorted(np.cumsum(long_counts), remaining))
            out[f"p{p}"] = 1 << bucket
    return out


def read_idx(path_prefix: str) -> IdxSummary:
    """Summarise a `.bin/.idx` pair: `read_idx("data/pile_text_document")`."""
    return IdxReader(path_prefix).summary()


def write_idx(
    path_prefix: str,
    length_chunks: Callable[[], Iterable],
    num_sequences: int,
    dtype_code: int = 8,
    document_indices=None,
    write_bin: bool = False,
) -> str:
    """Write an `.idx` (and optionally a zero-filled `.bin`) in megatron-core's layout.

    `length_chunks()` returns a fresh iterable of int arrays holding the sequence lengths
    (called twice: once for the lengths, once for the pointers), so files far larger than
    memory can be generated. `document_indices` defaults to one document per sequence.
    """
    import numpy as np

    prefix = _prefix(path_prefix)
    itemsize = DTYPE_SIZES[dtype_code]
    docs = np.arange(num_sequences + 1, dtype=np.int64) if document_indices is None else np.asarray(document_indices, np.int64)
    with open(prefix + ".idx", "wb") as out:
        out.write(MAGIC)
        out.write(struct.pack("<Q", 1))
        out.write(struct.pack("<B", dtype_code))
        out.write(struct.pack("<Q", num_sequences))
        out.write(struct.pack("<Q", len(docs)))
        written = 0
        for chunk in length_chunks():
            arr = np.asarray(chunk, dtype=np.int32)
            out.write(arr.tobytes())
            written += arr.size
        if written != num_sequences:
            raise ValueError(f"length_chunks gave {written} lengths, expected {num_sequences}")
        offset = 0
        for chunk in length_chunks():
            arr = np.asarray(chunk, dtype=np.int64) * itemsize
            pointers = np.cumsum(arr) - arr + offset
            offset += int(arr.sum())
            out.write(pointers.astype(np.int64).tobytes())
        out.write(docs.tobytes())
    if write_bin:
        with open(prefix + ".bin", "wb") as out:
            out.truncate(offset)
    return prefix


def write_idx_from_lengths(path_prefix: str, lengths, dtype_code: int = 8, document_indices=None, write_bin: bool = True) -> str:
    """Convenience for small datasets held in memory."""
    import numpy as np

    arr = np.asarray(lengths, dtype=np.int32)
    return write_idx(path_prefix, lambda: [arr], int(arr.size), dtype_code, document_indices, write_bin)


def read_rows(source, batch_rows: int):
    """Rows for `trainsteps count`: one row per sequence of a .bin/.idx pair, carrying its token count.

    The documents are already tokenized, so rows hold only `_num_tokens` (see data.formats.TOKEN_COUNT) and the
    count never tokenizes them again. The file is checked first (truncation, .bin size) by its summary."""
    from trainsteps.data.formats import TOKEN_COUNT
    from trainsteps.data.rows import RowBatch

    reader = IdxReader(source.path)
    reader.summary()
    n = reader.num_sequences
    index_bytes = HEADER_SIZE + 4 * n
    for begin in range(0, n, batch_rows):
        end = min(n, begin + batch_rows)
        rows = [{TOKEN_COUNT: length} for length in reader.lengths(begin, end).tolist()]
        yield RowBatch(rows, source, begin + 1, HEADER_SIZE + 4 * end if end < n else index_bytes)
