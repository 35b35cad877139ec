"""E13's fake jurors, shared by the jury's integration tests and the browser tests of where the
jury is shown: each juror a fake OpenAI-compatible server of its own scoring a judged output by
its own rule (its reason naming it and the score), reporting token usage, and the settings that
make a service use them as a jury (EVALSVC_JUDGES, their endpoints and their prices)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from decimal import Decimal
from typing import Any

from tests.fake_judge import Answer, FakeJudge, usage_of

# A juror's rule: the score it gives a judged output.
Rule = Callable[[str], int]


def output_of(request: dict[str, Any]) -> str:
    """The judged output a verdict request holds ("" for any other request)."""
    user = request["messages"][-1]["content"]
    found = re.search(r"<output>\n(.*?)\n</output>", user, re.DOTALL)
    return found.group(1) if found else ""


def answering(rule: Rule, name: str) -> Callable[[dict[str, Any]], Answer]:
    """A juror answering by `rule`, its reason "<name> gives <score>."."""

    def answer(request: dict[str, Any]) -> Answer:
        score = rule(output_of(request))
        return 200, json.dumps({"reason": f"{name} gives {score}.", "score": score})

    return answer


@contextmanager
def running_jurors(rules: Mapping[str, Rule]) -> Iterator[dict[str, FakeJudge]]:
    """A fake juror per name of `rules`, each on its own server, reporting its token usage."""
    with ExitStack() as stack:
        fakes = {name: FakeJudge(answering(rule, name)) for name, rule in rules.items()}
        for fake in fakes.values():
            fake.usage = usage_of
            stack.enter_context(fake.running())
        yield fakes


def jury_env(
    fakes: Mapping[str, FakeJudge], prices: Mapping[str, tuple[Decimal, Decimal]]
) -> dict[str, str]:
    """The settings that make the service's judges these jurors (EVALSVC_LLM the first), each
    at its own server with its own key, priced at `prices` (USD per million tokens, input and
    output)."""
    names = list(fakes)
    endpoints = {
        name: {"base_url": fake.base_url, "api_key": f"sk-test-{k}"}
        for k, (name, fake) in enumerate(fakes.items())
    }
    priced = {name: {"input": float(i), "output": float(o)} for name, (i, o) in prices.items()}
    return {
        "EVALSVC_LLM": names[0],
        "EVALSVC_OPENAI_BASE_URL": fakes[names[0]].base_url,
        "EVALSVC_OPENAI_API_KEY": "sk-test-0",
        "EVALSVC_JUDGES": ",".join(names),
        "EVALSVC_JUDGE_ENDPOINTS": json.dumps(endpoints),
        "EVALSVC_PRICES": json.dumps(priced),
        "EVALSVC_JUDGE_RETRY_BASE_SECONDS": "0.01",
    }
