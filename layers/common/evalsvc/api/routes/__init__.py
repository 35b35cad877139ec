"""One module per route, each exposing `router`. `all_routers()` is the whole API, in the order
literal paths must be matched before templated ones."""

from __future__ import annotations

from importlib import import_module

from fastapi import APIRouter

ROUTE_MODULES = (
    "create_seed_dataset",
    "add_seed_pair_for_prompt",
    "write_seed_dataset",
    "replace_seed_dataset",
    "get_seed_dataset",
    "list_seed_dataset_versions",
    "add_seed_pair",
    "get_synthetic_dataset",
    "specify_questions",
    "list_questions",
    "get_question_agreement",
    "get_question",
    "estimate_evaluation",
    "evaluate",
    "list_evaluations",
    "get_evaluation_agreement",
    "get_evaluation_anchored",
    "get_audit_sample",
    "get_evaluation_report",
    "get_evaluation",
    "get_evaluation_pairs",
    "rerun_evaluation",
    "vote_eval_pair",
    "compare",
    "get_comparison_report",
    "plan",
    "estimate_pairwise",
    "pairwise",
    "get_pairwise_report",
    "get_pairwise",
    "vote_pairwise",
    "questions",
    "improve_prompt",
    "augment",
    "get_usage",
    "create_monitor",
    "list_monitors",
    "get_monitor_history",
    "ingest_traces",
    "get_monitor_report",
    "run_monitor",
    "get_monitor",
    "delete_monitor",
)


def load_router(name: str) -> APIRouter:
    router: APIRouter = import_module(f"{__name__}.{name}").router
    return router


def all_routers() -> list[APIRouter]:
    return [load_router(name) for name in ROUTE_MODULES]
