"""The one typed settings object for tempr.

Every knob is declared here once, with its type and default, and read from
``TEMPR_*`` environment variables (or a ``.env`` file). Build it once per
process with :func:`get_settings` and pass it down; nothing else in tempr
reads the environment.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator
from pydantic import ValidationError as PydanticValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from config.errors import ConfigError
from tempr.core.fusion import parse_strategy_boosts

BudgetLevel = Literal["low", "mid", "high"]
_ANSWER: dict[str, Any] = {"changes_answer": True}


def answer(default: Any, **constraints: Any) -> Any:
    """A setting that changes the answer to the same request over the same data.

    Every such setting is part of the recall cache key (``answer_settings``), so a deployment that
    changes one never serves answers computed under the old value."""
    return Field(default, json_schema_extra=_ANSWER, **constraints)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="TEMPR_", env_file=".env", extra="ignore")

    # --- where things live -------------------------------------------------
    state_dir: Path = Path(".tempr")
    """Pidfiles, logs, the embedded database cluster and the local Redis live here."""
    database_url: str | None = None
    """External PostgreSQL (with pgvector). None: the embedded server under state_dir."""
    redis_url: str | None = None
    """External Redis. None: a local redis-server started by `tempr services up`."""
    broker_url: str | None = None
    """Celery broker; defaults to the Redis URL. `amqp://...` (RabbitMQ) works too."""
    result_backend: str | None = None
    """Celery result backend; defaults to the Redis URL."""
    cache_url: str | None = None
    """Redis for the recall cache, job records and idempotency keys; defaults to the Redis URL."""

    # --- models ------------------------------------------------------------
    embedder: Literal["onnx", "onnx-int8", "onnx-int8-mixed", "torch", "minilm", "fake"] = answer("onnx-int8")
    """all-MiniLM-L6-v2 run by ONNX Runtime, exported once into ``state_dir/models``. The default,
    ``onnx-int8``, is its int8 export (weights per channel): 2.0x the exact model's texts/s, cosine
    0.992 to the exact vectors, LoCoMo recall@k -0.04 to +0.43 points against the exact model's
    (BENCHMARKS.md, "The quantised embedders rechecked"). ``onnx-int8-mixed``: three MatMuls kept in
    float (1.85x, cosine 0.995); ``onnx``: the exact export (parity with torch, cosine >= 0.99);
    ``torch``: the sentence-transformers original (``minilm`` is its former name). It decides the
    vector space of *new* banks: an existing bank is always embedded in its own (``embedder.spaces``)."""
    embed_batch_size: int = Field(16, ge=1)
    """Texts per model call. Small batches are faster on CPU: on the 2-core machine, 16 against 64
    embedded LoCoMo source chunks 1.25-1.3x as fast and facts within 10 % (BENCHMARKS.md, "Embedding
    batch size"); a query is one text whatever this says."""
    embedder_threads: int = Field(0, ge=0)
    """Threads an embedding process uses (0: one per core). One text or one batch (a query) runs on
    that many ONNX Runtime intra-op threads (0: the runtime's default); a call of several batches
    (ingest) runs them side by side on that many threads of one intra-op thread each. `tempr services
    up` sets it for the ingest and analyse pools to cores / processes, so their processes do not run
    more threads than there are cores."""
    gc_freeze: bool = True
    """Freeze each worker's and the gateway's warm heap out of Python's garbage collector once its
    models are loaded (``tempr.heap``): full collections then skip those objects, which took about
    100 ms every ~20 recalls. false: CPython's default collector."""
    model_cache_dir: Path | None = None
    """Where the one-time ONNX export of the shipped model is kept. None: ``state_dir/models``."""
    reranker_model: str | None = answer(None)
    """CrossEncoder name or local path. None: the seed's RRF-derived fallback."""
    reranker_calibrated: bool = answer(False)
    """True when the model already returns [0, 1] scores (passed through, no sigmoid)."""
    reranker_batch_size: int = 32
    reranker_max_candidates: int = answer(300)
    reranker_device: str | None = None
    """None: cuda when available, else cpu."""
    recall_profile: Literal["default", "seed"] = answer("default")
    """`default`: the learned ranker is the rerank stage when no cross-encoder is configured, and
    its score is the final score (recency, temporal proximity and proof are among its features,
    not boosts on top). `seed`: the seed design exactly: the RRF-derived fallback without a
    cross-encoder, the three multiplicative boosts, recency on the fallback. See README."""
    recall_repeat_penalty: float = answer(3.0, ge=0.0)
    """The learned ranker's score lost per better-ranked memory of the same source chunk (0: off), so
    the top k covers more chunks (tempr.core.repeats; +0.3 evidence recall@10 on LoCoMo, README)."""
    ranker_model_path: Path | None = answer(None)
    """The learned ranker's model file (LightGBM members, then a linear member). None: the one shipped in tempr/data/ranker.txt."""
    ranker_runtime: Literal["compiled", "lightgbm"] = "compiled"
    """How the learned ranker's trees run: ``compiled`` to machine code once per machine and model
    (lleaves, cached in the model folder; 0.8 against 4.3 ms for a LoCoMo recall's 266 candidates,
    the same scores to 1e-14), or ``lightgbm``'s own predict. Compiled falls back to LightGBM, with
    a warning, where it cannot compile."""
    rerank_batch_max_pairs: int = 512
    """Rerank workers merge concurrent requests into one model call of at most this many pairs..."""
    rerank_batch_wait_ms: float = 10.0
    """...waiting at most this long for company."""

    # --- recall budget (seed: fixed 100/300/1000, adaptive 2.5/7.5/25 % clamped to [20, 2000])
    recall_budget_function: Literal["fixed", "adaptive"] = answer("fixed")
    recall_budget_fixed_low: int = answer(100)
    recall_budget_fixed_mid: int = answer(300)
    recall_budget_fixed_high: int = answer(1000)
    recall_budget_adaptive_low: float = answer(0.025)
    recall_budget_adaptive_mid: float = answer(0.075)
    recall_budget_adaptive_high: float = answer(0.25)
    recall_budget_min: int = answer(20)
    recall_budget_max: int = answer(2000)
    recall_fallback_recency: bool = answer(True)
    """Apply the recency boost when the RRF fallback stands in for a cross-encoder (the seed's rule).

    The fallback's scores step by only 0.9/(n-1) per rank, so recency's +-10% moves a memory
    about 27 places among 300 candidates: on LoCoMo's tuning conversations turning it off
    raises evidence recall@5 from 39.5 to 55.8 (BENCHMARKS.md). Off is the better choice for
    banks without a cross-encoder whose questions are not about recent events."""
    recall_strategy_boosts: str = answer("")
    """e.g. "graph:high,semantic:low" (rank-space boosts, see tempr.core.fusion)."""

    # --- strategies --------------------------------------------------------
    text_search_config: str = answer("english")
    """PostgreSQL text-search configuration for BM25: stemmed English, or `simple`."""
    bm25_k1: float = answer(1.2)
    bm25_b: float = answer(0.75)
    graph_hop_decay: float = answer(0.5)
    """Score multiplier per extra hop in graph traversal (hop 1 x1, hop 2 x0.5, hop 3 x0.25)."""
    graph_beam: int = answer(20, ge=0)
    """Graph hops after the first spread from only this many of the memories the hop before
    reached first, best first (0: from all of them). See tempr.store.recall_graph."""
    graph_seed_count: int = answer(10)
    """Graph traversal starts from this many of the best semantic+keyword hits (RRF of the two)."""
    hemisphere: Literal["north", "south"] = answer("north")
    temporal_languages: list[str] = Field(
        default_factory=lambda: ["en", "es", "fr", "de", "it", "pt", "ru", "zh", "ja", "ko"],
        json_schema_extra=_ANSWER,
    )

    # --- ingest ------------------------------------------------------------
    chunk_vectors: bool = True
    """Embed each memory's source chunk too (once per chunk), after its facts are visible (the
    ``tempr.ingest.embed_chunks`` task; in-process ingest does it before returning): the learned
    ranker reads the query's cosine to the chunk and its session beside the fact's (LoCoMo
    cross-validated +1 point at every k, BENCHMARKS.md). A chunk is usually longer than its facts,
    so this is more embedding work than the facts' own. False stores chunks without vectors (the
    ranker then reads the fact's cosine in their place, as for chunks written before version
    0005); ``tempr db embed-chunks`` adds them later."""
    token_vectors: bool = answer(True)
    """Keep each memory's content-token vectors (int8, about 0.4 KB a word; the same embedder run
    as its vector, so no extra model work) and compare the query with them word by word
    (``tempr.core.token_match``): the learned ranker's token features (LoCoMo cross-validated,
    BENCHMARKS.md "Token match"). False stores none and leaves those features missing."""
    semantic_link_threshold: float = Field(0.7, ge=-1.0, le=1.0)
    semantic_link_top_k: int = Field(10, ge=0, le=1000)
    temporal_link_window_hours: float = Field(24.0, gt=0)
    temporal_link_top_k: int = Field(0, ge=0, le=1000)
    """Temporal links per new memory: its ``k`` nearest in time within ``temporal_link_window_hours``.
    0 (the default) writes none, because no recall path reads them: the graph walk follows semantic and
    causal links (seed, "Graph traversal"), and the temporal strategy picks in-window memories by
    relevance and spreads them over time buckets (seed, "Temporal Search"; ``tempr.core.spreading``).
    They were 69 % of a LoCoMo import's link rows (10,640 of 15,365) and 74 ms of its 0.37 s beside
    the embedder (BENCHMARKS.md, "Temporal links no longer written"). Set 10 (the value before) to
    keep writing them for a reader of your own of ``memory_links``."""
    entity_extraction: Literal["spacy", "rules", "none"] = "rules"
    """How ingest finds the entities of a fact that names none: ``rules`` (runs of capitalised
    words, the default), ``spacy`` (spaCy's small English NER plus the same rules) or ``none``.
    Entities must look like names either way, so spaCy only changes span boundaries ("J.K.
    Rowling", "The Lord of the Rings"): on the LoCoMo dev facts the two differ in 11 of 1,210
    facts, cross-validated recall is the same within the model's seed spread, and spaCy costs
    about 40 % of the embedder's time per fact (BENCHMARKS.md, "Entities by rules")."""
    ingest_chunk_facts: int = 2000
    """Files longer than this are staged chunk by chunk (bounded memory) and published in one
    transaction; ``--via-workers`` sends one chunk per task to the ingest queue."""
    ingest_link_sessions: int = Field(2, ge=0, le=8)
    """Database sessions that find a bulk import's semantic links (an import that takes an empty bank
    past 5,000 memories) from its staged vectors before the publish's transaction opens, each walking
    a range of ids (``tempr.ingest.prelink``); 0: one session walks them inside that transaction."""

    # --- execution ---------------------------------------------------------
    recall_unit_cache: int = Field(10_000, ge=0)
    """Rows (a memory's fields, entities, chunk text and vector), and as many chunk vectors, the
    reranking process keeps between recalls, keyed by bank version so a write never serves stale
    rows (tempr.store.unit_cache); 0: read them from PostgreSQL on every recall."""
    recall_timeout_s: float = 30.0
    """Default per-request deadline; a request's `timeout_s` overrides it."""
    recall_deadline_grace_s: float = 2.0
    """How long past a deadline the watchdog and waiting clients give a job before calling it timed out."""
    strategy_timeout_s: float = 10.0
    """Soft time limit of one strategy task (prefork pools); past it the strategy degrades."""
    cache_ttl_s: int = 600
    """Recall cache entries live this long; bank writes invalidate them sooner (the key holds the bank version)."""
    job_result_ttl_s: int = 86400
    """Job records (status, result, webhook deliveries) and idempotency keys live this long."""
    celery_result_expires_s: int = 900
    """Celery's own result keys (the chord's bookkeeping, and a copy of the final answer that wakes
    waiting callers) expire sooner: the job record keeps the answer. Must outlast the longest
    deadline (a request's timeout_s is at most 600 s)."""
    webhook_secret: str | None = None
    """Signs webhooks of jobs that have no tenant (TEMPR_AUTH=off, or send_task without an api_key).
    Unset: such deliveries are refused, never signed with a guessable default. Jobs of a tenant are
    signed with the tenant's own secret, generated by `tempr keys create`."""
    webhook_max_attempts: int = 5
    webhook_backoff_base_s: float = 1.0
    """Attempt n waits base * 2^(n-1) seconds (capped at webhook_backoff_max_s) after a failure."""
    webhook_backoff_max_s: float = 300.0
    webhook_timeout_s: float = 5.0
    webhook_allow_link_local: bool = False
    """Allow callback URLs that resolve to ANY address, link-local and cloud-metadata included
    (a test switch; prefer webhook_allow_networks)."""
    webhook_allow_networks: str = ""
    """Comma-separated CIDRs that callback URLs may resolve to although they are not public
    (e.g. "127.0.0.1/32,10.0.0.0/8" for a receiver on this host or network). Empty: only public
    addresses; loopback, private, shared, link-local and metadata ranges are refused."""
    api_retry_after_s: int = 5
    """The Retry-After (seconds) of a 503 answered while Redis, PostgreSQL or the broker is down."""
    broker_connect_timeout_s: float = 2.0
    """How long one attempt to reach the broker may take when enqueueing (gateway and workers)."""
    broker_publish_retries: int = 1
    """Extra attempts to publish a message before the enqueue fails (a fast 503 at the gateway)."""
    broker_visibility_timeout_s: float | None = None
    """Redis broker only: seconds before a message taken by a worker that died without acking is
    handed to another. None: the longest task time limit + 60 s (a shorter value would redeliver
    long ingests that are still running). Recall messages redelivered after it are past their
    deadline and dropped (tempr_stale_messages_total); RabbitMQ redelivers at once when the
    worker's connection drops (see docs/reliability.md)."""
    worker_max_memory_per_child_mb: int | None = 1024
    """A prefork child whose resident memory passes this is replaced after its current task. A child
    starts near 520 MB and grows ~0.27 MB per recall (RELIABILITY.md), so this recycles it about
    every 1,800 recalls; the replacement shares the parent's embedder and is ready at once."""
    worker_max_tasks_per_child: int | None = None
    """A prefork child is replaced after this many tasks (None: never)."""
    task_events: bool = False
    """Workers send Celery task events (received/started/succeeded: three broker writes per task)
    from the start. Off by default: they cost ~1 ms per hop; `tempr flower` turns them on in the
    running workers itself (Flower's enable_events), so monitoring needs no setting."""
    services_ready_timeout_s: float = 180.0
    """How long `tempr services up` waits for its workers to answer (they load models first)."""
    pg_shared_buffers: str = Field(default="512MB", pattern=r"^[1-9][0-9]*(kB|MB|GB)$")
    """shared_buffers of the embedded PostgreSQL (applied at its start). PostgreSQL's default
    128MB holds less than the HNSW index of a 100k-fact database (198 MB): each ANN search then
    re-read ~6,000 pages from the OS cache. An external PostgreSQL: configure it there."""
    redis_maxmemory: str = "512mb"
    """maxmemory of the embedded Redis (external Redis: configure it there, docs/reliability.md)."""
    redis_maxmemory_policy: str = "volatile-lru"
    """Eviction policy of the embedded Redis: only keys with a TTL (cache, results, jobs), never queues;
    least recently used first, so an in-flight chord's short-lived keys are the last to go."""
    auth: Literal["on", "off"] = "on"
    """API keys on every HTTP route and on send_task recalls/ingests (`tempr keys create`). "off"
    only by explicit choice: every caller may then read and write every bank (warned at each start)."""
    auth_cache_s: float = Field(default=2.0, ge=0)
    """How long a gateway process trusts an API key it has checked (``tempr.auth.KeyCache``). A
    revoked key stops working within this on every gateway, at once on the one that revoked it.
    0: every request checks its key in PostgreSQL."""
    api_key: str | None = None
    """The key the CLI and the Python client send; None: read from <state_dir>/api_key (made by `make demo`)."""
    max_body_bytes: int = Field(default=16 * 1024 * 1024, ge=1024)
    """Larger HTTP request bodies are refused with 413 before they are read."""
    max_facts_per_request: int = Field(default=1000, ge=1)
    """Facts per ingest request (HTTP and the tempr.ingest.facts task); more is a 422."""
    max_query_chars: int = Field(default=8000, ge=1)
    """Longer recall queries are a 422, checked before the query is tokenised (so a huge query costs
    nothing); the 500-token limit is the binding one for ordinary text."""
    api_host: str = "127.0.0.1"
    api_port: int = 8765
    api_wait_timeout_s: float = 30.0
    gateway_analyse: bool = True
    """On a cache miss the HTTP gateway analyses the query itself (embedding, time windows) and
    sends the strategy chord, instead of enqueueing the start task to do it one queue hop later
    (BENCHMARKS.md, "A miss started at the gateway"). The gateway then loads the query embedder at
    start. Requests with a callback_url or an Idempotency-Key, and Celery clients, always take the
    start task. false: every miss goes through the start task (a gateway without the model)."""
    metrics_dir: Path | None = None
    """prometheus_client multi-process files; None: <state_dir>/metrics."""
    worker_metrics_port: int | None = None
    """When set, each worker's main process serves /metrics on this port (hosts without the API)."""
    otel_enabled: bool = False
    """Trace every recall with OpenTelemetry (gateway, every task of the chord, the webhook). Off by default."""
    otel_endpoint: str | None = None
    """OTLP/HTTP traces endpoint (e.g. http://otel-collector:4318/v1/traces); None: the exporter's
    default (OTEL_EXPORTER_OTLP_* variables). Used when otel_enabled and no spans file is set."""
    otel_service_name: str = "tempr"
    """service.name of the spans; each role appends its own (tempr-gateway, tempr-worker)."""
    otel_spans_file: Path | None = None
    """Write spans as JSON lines to this file instead of OTLP (debugging, tests; one file per host)."""
    fault_strategies: str = ""
    """TEST ONLY fault injection read by strategy tasks: "semantic" raises, "graph:slow" sleeps past
    strategy_timeout_s, "*@allfail-" makes every strategy raise for banks named allfail-*. Empty in production."""

    @field_validator("temporal_languages", mode="before")
    @classmethod
    def _split_languages(cls, value: object) -> object:
        if isinstance(value, str):
            return [v.strip() for v in value.split(",") if v.strip()]
        return value

    @field_validator("recall_strategy_boosts")
    @classmethod
    def _boosts(cls, value: str) -> str:
        parse_strategy_boosts(value)  # a typo fails here, naming the part, not on every request
        return value

    @classmethod
    def answer_settings(cls) -> tuple[str, ...]:
        """The settings marked ``answer(...)``: every one is part of the recall cache key."""
        return tuple(
            name
            for name, f in cls.model_fields.items()
            if isinstance(f.json_schema_extra, dict) and f.json_schema_extra.get("changes_answer")
        )

    @property
    def api_key_file(self) -> Path:
        return self.state_dir.resolve() / "api_key"

    @property
    def pg_dir(self) -> Path:
        return self.state_dir.resolve() / "pg"

    @property
    def redis_dir(self) -> Path:
        return self.state_dir.resolve() / "redis"

    @property
    def models_dir(self) -> Path:
        """Where the ONNX exports live: ``TEMPR_MODEL_CACHE_DIR``, else the state folder's ``models``."""
        return self.model_cache_dir or self.state_dir.resolve() / "models"


def load_settings(**overrides: Any) -> Settings:
    """Settings from the environment, checked now: a bad value raises ``ConfigError`` naming its
    ``TEMPR_*`` variable (the CLI prints it as one line)."""
    try:
        return Settings(**overrides)
    except PydanticValidationError as exc:
        err = exc.errors()[0]
        name = str(err["loc"][0]) if err["loc"] else ""
        variable = f"TEMPR_{name.upper()}" if name else "TEMPR_*"
        message = err["msg"].removeprefix("Value error, ")
        raise ConfigError(f"{message} (got {err.get('input')!r})", field=variable) from None


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, built (and checked) on first use."""
    return load_settings()
