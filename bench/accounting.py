"""What LLM accounting (E3) adds to each request and each chunk, in DynamoDB calls: the monthly
ledger (limit read, reservation, settlement) and each chunk's usage item, counted apart from
the calls the work makes anyway. Runs against moto in-process, with the fake OpenAI-compatible
judge on 127.0.0.1.

    .venv/bin/python bench/accounting.py [--pairs 40] [--chunk-calls 10]
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from decimal import Decimal
from typing import Any

# The harness sets the offline environment before any service module reads it.
from harness import fresh_tables

# isort: split

import boto3
from evalsvc.core.deadlines import Deadline
from evalsvc.core.settings import get_settings
from evalsvc.logic import evaluations, jobs, metric_set_create, results, spending
from evalsvc.models.api_keys import Identity
from evalsvc.models.datasets import DatasetKind, Pair
from evalsvc.models.evaluations import EvaluateIn
from evalsvc.storage import datasets as datasets_store
from evalsvc.storage import dynamo, work_queue
from evalsvc_tools.local.inprocess import moto_in_process
from evalsvc_tools.local.server import apply_environment
from evalsvc_tools.local.tables import create_queues

from tests.fake_judge import FakeJudge

QUESTIONS = ["Is the answer polite?", "Does it answer the question?"]


class Accounting:
    """Counts DynamoDB calls: those of accounting (the usage table; a chunk's usage items of
    the jobs table) by operation, and all others together."""

    def __init__(self) -> None:
        self.accounting: Counter[str] = Counter()
        self.other = 0
        dynamo.client().meta.events.register("before-parameter-build.dynamodb", self._count)

    def _count(self, event_name: str, params: dict[str, Any], **_: Any) -> None:
        operation = event_name.rsplit(".", 1)[-1]
        settings = get_settings()
        table = params.get("TableName", "")
        text = repr(params)
        if table == settings.usage_table or (table == settings.jobs_table and "spent#" in text):
            self.accounting[operation] += 1
        else:
            self.other += 1

    def take(self) -> tuple[Counter[str], int]:
        counted = (self.accounting, self.other)
        self.accounting, self.other = Counter(), 0
        return counted


def shown(calls: Counter[str]) -> str:
    return ", ".join(f"{op} {n}" for op, n in sorted(calls.items())) or "none"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=40)
    parser.add_argument("--chunk-calls", type=int, default=10)
    args = parser.parse_args()
    judge = FakeJudge()
    identity = Identity(tenant="bench", user="u", user_email="u@bench", key_id="b")
    with moto_in_process(), judge.running():
        fresh_tables()
        queues = create_queues(boto3.client("sqs", region_name="us-east-1"), "bench")
        env = {
            "EVALSVC_LLM": "openai:fake-judge",
            "EVALSVC_OPENAI_BASE_URL": judge.base_url,
            "EVALSVC_OPENAI_API_KEY": "sk-bench",
            "EVALSVC_PRICES": json.dumps({"openai:fake-judge": {"input": 1, "output": 4}}),
            "EVALSVC_WORK_QUEUE_URL": queues["WorkQueue"],
            "EVALSVC_CHUNK_JUDGE_CALLS": str(args.chunk_calls),
            "EVALSVC_SYNC_WAIT_SECONDS": "0",
        }
        apply_environment(env)
        counter = Accounting()
        metric_set_create.create_metrics_set(identity, QUESTIONS)
        print(f"{args.pairs} pairs x {len(QUESTIONS)} questions; moto in-process\n")

        def dataset(name: str, count: int) -> None:
            pairs = [Pair(id=f"p{k}", input=f"{name} q{k}", output=f"a{k}") for k in range(count)]
            datasets_store.write_dataset(
                identity.tenant, DatasetKind.SEED, name, pairs, "Be kind.", is_new=True
            )

        def inline(name: str, count: int) -> None:
            dataset(name, count)
            counter.take()
            evaluations.evaluate(identity, EvaluateIn(seed_data_id=name), Deadline.after(29))
            extra, other = counter.take()
            print(f"  accounting {shown(extra)}; the rest of the request: {other} calls")

        print("an evaluation inside its request (4 judge calls)")
        print(" no monthly limit:")
        inline("inline-a", 2)
        spending.set_limit("bench", Decimal(1000))
        print(" with a monthly limit (the month's first reservation starts its map):")
        inline("inline-b", 2)
        print(" with a monthly limit:")
        inline("inline-c", 2)

        def queued(name: str) -> None:
            dataset(name, args.pairs)
            counter.take()
            result = evaluations.evaluate(
                identity, EvaluateIn(seed_data_id=name), Deadline.after(29), respond_async=True
            )
            extra, other = counter.take()
            print(f"  the request: accounting {shown(extra)}; the rest: {other} calls")
            sqs = work_queue.client()
            chunk_totals: Counter[str] = Counter()
            chunk_other = deliveries = 0
            while True:
                got = sqs.receive_message(QueueUrl=queues["WorkQueue"], MaxNumberOfMessages=10)
                messages = got.get("Messages", [])
                if not messages:
                    break
                for message in messages:
                    chunk = work_queue.decode(message["Body"])
                    jobs.run_chunk(chunk, 1, Deadline.after(600))
                    sqs.delete_message(
                        QueueUrl=queues["WorkQueue"], ReceiptHandle=message["ReceiptHandle"]
                    )
                    extra, other = counter.take()
                    chunk_totals.update(extra)
                    chunk_other += other
                    deliveries += 1
            done = results.current("bench", result.results_id)
            assert done is not None and done.status.value == "complete", done
            print(
                f"  {deliveries} chunks: accounting {shown(chunk_totals)} in all, "
                f"{sum(chunk_totals.values()) / deliveries:.2f} a chunk (the job's finish "
                f"included); the rest: {chunk_other / deliveries:.1f} calls a chunk"
            )
            print(f"  usage of the result: {done.usage}")
            counter.take()
            results.current("bench", result.results_id)
            extra, other = counter.take()
            print(f"  reading the complete result: accounting {shown(extra)}; the rest: {other}")

        print(f"\na queued evaluation ({args.chunk_calls} judge calls a chunk)")
        spending.clear_limit("bench")
        print(" no monthly limit:")
        queued("queued-a")
        spending.set_limit("bench", Decimal(1000))
        print(" with a monthly limit:")
        queued("queued-b")
        print(f"\nthe month: {spending.month_usage('bench', None).model_dump(mode='json')}")


if __name__ == "__main__":
    main()
