"""`tempr ranker train`: retrain the learned ranker on the LoCoMo dev conversations.

Ingests the conversations into their benchmark banks (services must be up, as for
`tempr bench`), collects every question's fused candidates and their features, prints the
leave-one-conversation-out recall@k next to the semantic-only baseline, and writes the model
trained on all conversations (default: the shipped ``tempr/data/ranker.txt``). The training
code lives in the repository's ``bench/`` package, so this command runs from a checkout.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "ranker",
        help="retrain the learned ranker (LightGBM LambdaRank) on the LoCoMo dev conversations",
        description="Retrain the learned ranker and report its leave-one-conversation-out recall.",
    )
    p.add_argument("action", choices=("train",), help="train: collect, cross-validate, fit and write the model")
    p.add_argument("--locomo", type=Path, default=None, help="folder of LoCoMo conversations")
    p.add_argument("--output", type=Path, default=None, help="model file (default: tempr/data/ranker.txt)")
    p.add_argument("--refresh", action="store_true", help="recollect the candidates even if cached")
    p.add_argument("--no-cv", action="store_true", help="skip the leave-one-conversation-out report")
    p.add_argument(
        "--cv-seeds",
        type=int,
        default=0,
        metavar="N",
        help="also cross-validate with model seeds 1..N and print each and their mean ± std (the model's own noise)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from config.errors import ValidationError

    try:
        from bench import ranker_cli
    except ImportError:
        raise ValidationError(
            "the bench package is not installed: run `make install` in a checkout of the repository", field="bench"
        ) from None

    if args.cv_seeds < 0:
        raise ValidationError("--cv-seeds must be 0 or more", field="cv_seeds")
    options = ranker_cli.Options(refresh=args.refresh, cv=not args.no_cv, cv_seeds=args.cv_seeds)
    if args.locomo is not None:
        options.locomo = args.locomo
    if args.output is not None:
        options.output = args.output
    if not options.locomo.is_dir():
        raise ValidationError(f"no LoCoMo folder at {options.locomo} (use --locomo DIR)", field="locomo")
    ranker_cli.train(options)
    return 0
